"""The judges' reply cache: one JSON file per (prompt version, model, inputs hash), so a re-run makes no call."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..inputs import load_json
from ..tempfiles import write_json


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
        path = self.directory / f"{key[:2]}/{key}.json"
        try:
            record = load_json(path.read_text(encoding="utf-8"), path)
        except (OSError, ValueError, InputError, MemoryError):
            return None
        return record if isinstance(record, dict) and "raw" in record else None

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store `record` atomically (two workers writing one key leave one whole file)."""
        if self.directory is None:
            return
        path = self.directory / f"{key[:2]}/{key}.json"
        # the temp file names this process, so a killed run's leftover is swept like the other caches'
        if not write_json(path, record):
            raise OSError(f"{path}: the reply cache cannot be written")
