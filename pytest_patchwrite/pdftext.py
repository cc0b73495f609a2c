"""The text of a PDF the engine wrote, as a reader would search it (pypdf)."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

MAX_PAGES = 400  # a thesis; beyond that the placeholder check falls back to the source rules


def pdf_text(path: Path, max_pages: int = MAX_PAGES) -> str | None:
    """Return the text of every page of `path`, or None when there is no PDF or it cannot be read."""
    try:
        from pypdf import PdfReader
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its font warnings say nothing about the manuscript
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(path)
            if len(reader.pages) > max_pages:
                return None
            text = "\n".join(page.extract_text() or "" for page in reader.pages)
    except Exception:  # pypdf raises many kinds on odd files; the source rules still apply
        return None
    return text if text.strip() else None
