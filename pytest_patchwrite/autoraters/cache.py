"""The judges' reply cache: one JSON file per (prompt version, model, inputs hash), so a re-run makes no call.

Entries are sealed with the user's cache secret (gates.cachetrust) and live outside the work tree by
default: a reply planted in a pull request's checkout is never read as the judge's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..files.tempfiles import write_json
from ..gates import cachetrust

KIND = "judge-reply"


def default_dir() -> Path:
    """Return the reply cache of this user: `$XDG_CACHE_HOME/patchwrite/judge`, outside every work tree."""
    return cachetrust.cache_home() / "judge"


def cache_key(prompt_version: str, model: str, payload: Any) -> str:
    """Return the hex key of one call: its prompt version, model and the hash of everything it sends."""
    inputs = hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return hashlib.sha256(f"{prompt_version}\0{model}\0{inputs}".encode()).hexdigest()


class ReplyCache:
    """Replies stored under `directory` (or nowhere when it is None)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def get(self, key: str) -> dict[str, Any] | None:
        """Return the stored record of `key`, or None (also for an unreadable file)."""
        if self.directory is None:
            return None
        record, _rejected = cachetrust.read_entry(self.directory / f"{key[:2]}/{key}.json", KIND, key)
        return record if isinstance(record, dict) and "raw" in record else None

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store `record` atomically (two workers writing one key leave one whole file)."""
        if self.directory is None:
            return
        path = self.directory / f"{key[:2]}/{key}.json"
        # the temp file names this process, so a killed run's leftover is swept like the other caches'
        entry = cachetrust.seal(KIND, key, record)
        if entry is None:  # no usable secret: cachetrust said why; replies are not kept
            return
        if not write_json(path, entry):
            raise OSError(f"{path}: the reply cache cannot be written")
