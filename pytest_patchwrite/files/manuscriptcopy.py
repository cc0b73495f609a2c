"""Copying a manuscript's directory for the sandbox or a scratch check (`copy_manuscript_dir`): the tree without
dot-files, stale build outputs or links out, the snapshot's own bytes for the texts it holds."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputTooLarge
from .inputs import HELD_FILE_BYTES, hold
from .treecopy import CopyCap, copy_tree

_SKIP_DIRS = {"__pycache__", "node_modules"}
_STALE_SUFFIXES = (".aux", ".log", ".pdf", ".bbl", ".blg", ".bcf", ".run.xml", ".toc", ".lof", ".lot", ".out",
                   ".fls", ".fdb_latexmk", ".synctex.gz", ".nav", ".snm", ".xdv")  # fmt: skip


MAX_COPY_BYTES = 512 * 1024 * 1024
MAX_COPY_FILES = 20000


#: what the gates may read after a compile besides the sources: bibliographies and experimental logs
_READ_LATER = (".bib", ".json", ".jsonl", ".csv", ".tsv", ".toml", ".yaml", ".yml", ".txt")


def _worth_keeping(rel: str, size: int) -> bool:
    return size <= HELD_FILE_BYTES and rel.lower().endswith(_READ_LATER)


def copy_manuscript_dir(
    src: Path,
    dst: Path,
    job: str,
    *,
    max_bytes: int = MAX_COPY_BYTES,
    job_dir: str = "",
    held: dict[Path, bytes] | None = None,
    digests: dict[Path, bytes] | None = None,
    store: dict[Path, bytes] | None = None,
) -> dict[str, bytes]:
    """Copy a manuscript directory; return {relpath: sha256 of its bytes} for each copied file.

    A file whose real path is in `held` (a snapshot's texts) gets those bytes, not the disk's, and is not opened
    again: the checked bytes are the compiled bytes (`digests`: their sha256 when known). Small bibliographies and
    logs it copies are kept in `store` (a snapshot's `data`), so the gates after the compile do not read them again.

    Only regular files and directories inside `src` are copied, opened so that no
    other process can swap one for a symlink in between (see `treecopy`). Left out:
    dot-files and dot-directories (VCS data such as `.git/config`, caches) and links
    to them, the job's stale build outputs (in `job_dir`, the paper's directory
    relative to `src`), symlinks that leave the directory (a pull request must not
    smuggle `/etc/passwd` in as `notes.tex`), and files with more than one hard link
    (one of the names may live outside). Raise InputTooLarge past `max_bytes` or
    `MAX_COPY_FILES` files.
    """
    prefix = f"{job_dir.strip('/')}/" if job_dir.strip("/") else ""
    stale = {f"{prefix}{job}{suffix}" for suffix in _STALE_SUFFIXES} if job else set()

    def keep(rel: str, is_dir: bool) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return name not in _SKIP_DIRS if is_dir else rel not in stale

    try:
        top = Path(os.path.realpath(src))
        inside = {p.relative_to(top).as_posix(): (data, (digests or {}).get(p))
                  for p, data in (held or {}).items() if p.is_relative_to(top)}  # fmt: skip
        captured: dict[str, bytes] = {}
        copied = copy_tree(src, dst, keep=keep, max_bytes=max_bytes, max_files=MAX_COPY_FILES, held=inside,
                           capture=_worth_keeping if store is not None else None, captured=captured)  # fmt: skip
        for rel, data in captured.items():
            hold(store if store is not None else {}, top / rel, data)
        return copied
    except CopyCap:
        raise InputTooLarge(
            src,
            f"the manuscript's directory holds more than {max_bytes >> 20} MB or {MAX_COPY_FILES} files"
            "; the sandbox copy is capped",
        ) from None
