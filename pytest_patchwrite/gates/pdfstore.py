"""The PDFs of passing compiles, kept beside their verdicts so `diff --pages` on a cached verdict needs no engine.

A PDF read back is drawn for a reviewer, so it is sealed like a verdict (gates.cachetrust): its
entry holds the PDF's sha256 under an HMAC, and a PDF whose bytes do not match is ignored.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from ..files.streamread import file_sha256
from ..files.tempfiles import write_json_failure
from . import cachetrust

MAX_BYTES = 64 << 20  # pdftext's cap: a larger PDF is never read or drawn


def _paths(cache_dir: Path, key: str) -> tuple[Path, Path]:
    folder = cache_dir / "pdf" / key[:2]
    return folder / f"{key}.pdf", folder / f"{key}.json"


def put(cache_dir: Path | None, key: str, pdf: Path) -> None:
    """Keep `pdf` under the compile's cache `key` (nothing when there is no disk cache or it is too large); a cache
    directory that cannot be written is one warning (cachetrust.unwritable)."""
    try:
        if cache_dir is None or not cachetrust.writable(cache_dir) or not pdf.is_file() or pdf.is_symlink():
            return
        if pdf.stat().st_size > MAX_BYTES:
            return
        entry = cachetrust.seal("pdf", key, {"sha256": file_sha256(pdf).hex()})
    except OSError:
        return  # the sandbox's PDF is gone: nothing to keep
    if entry is None:
        return
    target, meta = _paths(cache_dir, key)
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pdf, partial)
        os.replace(partial, target)
    except OSError as exc:  # a store that cannot be written only costs a compile later
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        cachetrust.unwritable(cache_dir, exc.strerror or str(exc))
        return
    if why := write_json_failure(meta, entry):
        cachetrust.unwritable(cache_dir, why)


def get(cache_dir: Path | None, key: str, target: Path, rejected: list[str] | None = None) -> bool:
    """Copy the PDF kept under `key` to `target`; return whether one was there and its bytes verified."""
    if cache_dir is None:
        return False
    source, meta = _paths(cache_dir, key)
    data, refused = cachetrust.read_entry(meta, "pdf", key)
    if refused and rejected is not None:
        rejected.append(str(meta))
    if not isinstance(data, dict) or not isinstance(data.get("sha256"), str):
        return False
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as src, open(target, "wb") as dst:
            if os.fstat(src.fileno()).st_size > MAX_BYTES:
                return False
            shutil.copyfileobj(src, dst)
    except OSError:
        return False
    if file_sha256(target).hex() != data["sha256"]:
        if rejected is not None:
            rejected.append(str(source))
        target.unlink()
        return False
    return True
