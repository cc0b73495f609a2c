"""The text of a PDF the engine wrote, as a reader would search it (pypdf)."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

MAX_PAGES = 400  # a thesis; beyond that the placeholder check falls back to the source rules
# The PDF comes from an untrusted manuscript and is parsed outside the sandbox: past these sizes the
# placeholder check falls back to the source rules instead of spending the runner's memory on it
# (pypdf itself caps each decompressed stream at 75 MB).
MAX_PDF_BYTES = 64 * 1024 * 1024
MAX_TEXT_CHARS = 16 * 1024 * 1024


def pdf_text(
    path: Path, max_pages: int = MAX_PAGES, max_bytes: int = MAX_PDF_BYTES, max_chars: int = MAX_TEXT_CHARS
) -> str | None:
    """Return the text of every page of `path`, or None when there is no PDF, it is too large or cannot be read."""
    try:
        from pypdf import PdfReader
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its font warnings say nothing about the manuscript
    try:
        if not path.is_file() or path.stat().st_size > max_bytes:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(path)
            if len(reader.pages) > max_pages:
                return None
            parts: list[str] = []
            size = 0
            for page in reader.pages:
                parts.append(page.extract_text() or "")
                size += len(parts[-1])
                if size > max_chars:
                    return None
    except Exception:  # pypdf raises many kinds on odd files; the source rules still apply
        return None
    text = "\n".join(parts)
    return text if text.strip() else None
