"""The compile gate's verdict cache: a report stored as JSON under the digest of everything it was compiled from."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..files.inputs import text_digest
from . import cachetrust
from .report import CompileReport

CACHE_VERSION = "8"  # 6: the repository mirror, one message per error and line, the engine record; 7: cited keys;
# 8: the keys the job defined itself


def default_cache_dir() -> Path:
    """Return the user cache directory for verdicts (`$XDG_CACHE_HOME/patchwrite/compile`)."""
    return cachetrust.cache_home() / "compile"


def source_digests(copied: dict[str, bytes], overrides: dict[Path, str], root: Path) -> dict[str, bytes]:
    """Return {relpath: sha256} of the compiled sources: the copy hashed each file, replaced ones hash their text."""
    files = dict(copied)
    for path, text in overrides.items():
        files[str(path.relative_to(root.parent))] = text_digest(text)
    return files


@functools.cache
def code_digest() -> str:
    """Return the digest of this package's own code (every module's path, size and modification time), once per
    process.

    A verdict is what this code said about those bytes: an upgrade, or a fix of a gate, must not be answered by
    the verdicts the old code cached (a document the new code fails stayed "compile ok (cached)"). CACHE_VERSION
    still names format changes; this covers every change of the code (an install or an edit writes the file).
    Stat, not bytes: a few milliseconds per process, where reading every module cost a `patchwrite apply` 60 ms."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        st = path.stat()
        digest.update(f"{path.relative_to(package).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def cache_key(options: list[str], sources: dict[str, bytes]) -> str:
    """Return the digest of the gate's options (with CACHE_VERSION and the code's digest) and every source's path
    and bytes."""
    digest = hashlib.sha256()
    digest.update(json.dumps([CACHE_VERSION, code_digest(), *options]).encode())
    for rel in sorted(sources):
        digest.update(rel.encode() + b"\0")
        digest.update(sources[rel])
    return digest.hexdigest()


def load(cache_dir: Path, key: str, base: Path, rejected: list[str] | None = None) -> dict[str, Any] | None:
    """Return the cached report's JSON data with its paths moved to `base` (the same bytes may sit in another
    directory), or None; an entry whose HMAC does not verify is ignored and its path appended to `rejected`."""
    path = cache_dir / key[:2] / f"{key}.json"
    data, refused = cachetrust.read_entry(path, "verdict", key)
    if refused and rejected is not None:
        rejected.append(str(path))
    try:
        cached_base = str(data.pop("base"))
        for entry in (*data["messages"], *data["violations"]):
            entry["file"] = _moved(str(entry["file"]), cached_base, base)
    except (TypeError, KeyError, AttributeError):
        return None
    return data if isinstance(data, dict) else None


def load_report(cache_dir: Path, key: str, base: Path, rejected: list[str]) -> CompileReport | None:
    """Return the cached report under `key`, its paths moved to `base` (see `load`), or None."""
    data = load(cache_dir, key, base, rejected)
    try:
        return CompileReport.from_json(data) if data is not None else None
    except (TypeError, KeyError, ValueError):
        return None


def store(cache_dir: Path, key: str, data: dict[str, Any], base: Path) -> None:
    """Store a report's JSON data under `key`, sealed, remembering the directory its paths lie in."""
    entry = cachetrust.seal("verdict", key, {**data, "base": str(base)})
    if entry is not None:
        cachetrust.store(cache_dir, cache_dir / key[:2] / f"{key}.json", entry)  # one that fails: a warning


def _moved(file: str, old: str, new: Path) -> str:
    """Return `file` moved from directory `old` to `new` when it lies below `old`; a system file stays."""
    if file == old or file.startswith(old.rstrip(os.sep) + os.sep):
        return str(new / os.path.relpath(file, old))
    return file
