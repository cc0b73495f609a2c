"""Reading a file too big to hold: hashed in one pass, or read as UTF-8 text in pieces of whole lines.

`inputs.read_held` keeps a small file's bytes in the snapshot; a file past `inputs.HELD_FILE_BYTES`
is never held whole: `digest_held` hashes it (the content hash is every cache's key) and
`Streamed` reads it piece by piece, hashing again as it reads. The caps and messages are
`inputs`' own (regular files only, the size cap of the kind, the line of a bad byte).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError, InputTooLarge
from . import inputs
from .inputs import MB, _read_opened, _too_large, decode, hold, limit_for, note_read, open_regular

#: how much of a streamed file is read at a time
STREAM_PIECE = 1 * MB


def digest_held(path: Path | str, kind: str, held: dict[Path, bytes] | None) -> tuple[bytes, bytes | None]:
    """Return (sha256, bytes) of a regular file, opened once: its bytes as `read_held` keeps them when it is at most
    HELD_FILE_BYTES, None for a larger one, which is only hashed here (read it as a `Streamed`, never whole)."""
    real = Path(os.path.realpath(path))
    if held is not None and real in held:
        return hashlib.sha256(held[real]).digest(), held[real]
    limit = limit_for(kind)
    fd, info = open_regular(path)
    try:
        if inputs.HELD_FILE_BYTES < info.st_size <= limit:
            return Streamed(path, kind).hash_open(fd, info), None
        data = _read_opened(fd, info, path, kind, limit)
    finally:
        os.close(fd)
    if held is not None:
        hold(held, real, data)
    return hashlib.sha256(data).digest(), data


class Streamed:
    """A regular file's UTF-8 text read once in pieces that end at a line break (never held whole), hashed as read.

    Iterating yields the pieces; afterwards `digest` is the sha256 of every byte read (the cache key) and the read
    is recorded (`note_read`). A bad byte raises InputError naming its line; so does a line longer than the
    `log_document` cap (a stream holds one line at a time).
    """

    def __init__(self, path: Path | str, kind: str = "log") -> None:
        self.path, self.kind = path, kind
        self.digest: bytes | None = None

    def hash_open(self, fd: int, info: os.stat_result) -> bytes:
        """Return the sha256 of the bytes of `fd` (this file, open), read in pieces up to the cap and recorded."""
        limit, hashed, total = limit_for(self.kind), hashlib.sha256(), 0
        try:
            while chunk := os.read(fd, STREAM_PIECE):
                total += len(chunk)
                if total > limit:
                    raise _too_large(self.path, None, self.kind, limit)
                hashed.update(chunk)
        except OSError as exc:
            raise InputError(self.path, f"cannot be read ({exc.strerror})") from None
        self.digest = hashed.digest()
        note_read(self.path, info, digest=self.digest)
        return self.digest

    def __iter__(self) -> Iterator[str]:
        limit, longest = limit_for(self.kind), limit_for("log_document")
        fd, info = open_regular(self.path)
        try:
            if info.st_size > limit:
                raise _too_large(self.path, info.st_size, self.kind, limit)
            hashed, total, line, rest = hashlib.sha256(), 0, 1, b""
            while True:
                try:
                    chunk = os.read(fd, STREAM_PIECE)
                except OSError as exc:
                    raise InputError(self.path, f"cannot be read ({exc.strerror})") from None
                total += len(chunk)
                if total > limit:
                    raise _too_large(self.path, None, self.kind, limit)
                hashed.update(chunk)
                data = rest + chunk if rest else chunk
                if not data:
                    break
                cut = data.rfind(b"\n") + 1 if chunk else len(data)
                if cut == 0:
                    if len(data) > longest:
                        raise InputTooLarge(self.path, f"holds a line longer than {longest / MB:g} MB, the most a log "
                                            "read as a stream holds at once (PATCHWRITE_MAX_LOG_DOCUMENT_MB)",
                                            line=line)  # fmt: skip
                    rest = data
                    continue
                piece, rest = data[:cut], data[cut:]
                if piece:
                    yield decode(piece, self.path, line)
                    line += piece.count(b"\n")
                if not chunk:
                    break
            self.digest = hashed.digest()
            note_read(self.path, info, digest=self.digest)
        finally:
            os.close(fd)


def file_sha256(path: Path | str) -> bytes:
    """Return the sha256 of a file's bytes, read in pieces (never held whole: a copied 200 MB log)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.digest()
