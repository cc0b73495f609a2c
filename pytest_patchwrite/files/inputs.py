"""The one bounded reader for untrusted inputs: manuscripts, edit replies, experimental logs, bibliographies.

Only regular files are read: a FIFO is opened without blocking and refused, a device such as
`/dev/zero` is refused, and a file larger than its kind's cap is refused before it is read.
The caps are far above real papers; `PATCHWRITE_MAX_<KIND>_MB` (for example
`PATCHWRITE_MAX_LOG_MB=2048`) raises one.
"""

from __future__ import annotations

import codecs
import contextvars
import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import EnvironmentFault, InputError, InputTooLarge, NotRegularFile, UsageError

MB = 1024 * 1024
#: default caps in bytes, per kind of input
DEFAULT_LIMITS = {
    "manuscript": 16 * MB,  # the whole manuscript; the largest real papers hold a few MB of source
    "edit": 64 * MB,
    "log": 1024 * MB,
    "bib": 256 * MB,
    # a log parsed as one document (JSON, YAML, TOML), and one line of a log read as a stream
    "log_document": 64 * MB,
    # a bindings file holds ~400 bytes per number: 16 MB is some 40,000 numbers, far past a real paper
    "bindings": 16 * MB,
}
#: a timer thread takes at most this (threading.TIMEOUT_MAX is larger); a week is past any compile
MAX_SECONDS = 7 * 24 * 3600.0
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


def limit_for(kind: str) -> int:
    """Return the size cap in bytes for inputs of `kind`, from `PATCHWRITE_MAX_<KIND>_MB` or the default."""
    megabytes = positive_env(f"PATCHWRITE_MAX_{kind.upper()}_MB", "size in megabytes")
    if megabytes is not None:
        return int(megabytes * MB)
    return DEFAULT_LIMITS.get(kind, DEFAULT_LIMITS["manuscript"])


def positive_env(name: str, what: str = "number") -> float | None:
    """Return the positive number an environment variable sets, None when unset; an InputError naming it if bad."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0 < number < 1 << 40:
        raise InputError(name, f"{value!r} is not a positive {what}")
    return number


def _what(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def _too_large(path: Path | str, size: int | None, kind: str, limit: int) -> InputTooLarge:
    shown = f"is {size / MB:.1f} MB" if size is not None else "is larger than the cap"
    article = "" if kind.endswith("s") else "an " if kind[:1].lower() in "aeiou" else "a "  # `bindings`: a plural
    return InputTooLarge(
        path,
        f"{shown}; the cap for {article}{kind} is {limit / MB:g} MB (raise it with PATCHWRITE_MAX_{kind.upper()}_MB)",
    )


def _read_fd(fd: int, path: Path | str, kind: str, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        # one byte past the cap tells a file that grew while we read it from one that fits
        chunk = os.read(fd, min(8 * MB, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large(path, None, kind, limit)


def open_regular(path: Path | str) -> tuple[int, os.stat_result]:
    """Return an fd open for reading and its stat, only for a regular file; never blocks on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise NotRegularFile(path, "is a directory, not a file") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path, f"is {_what(info.st_mode)}, not a regular file; it is never read")
        # reads of a regular file never block; clear the flag so nothing below sees EAGAIN
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_bytes(path: Path | str, kind: str = "manuscript", limit: int | None = None) -> bytes:
    """Return the bytes of a regular file no larger than the cap for `kind`; raise InputError otherwise."""
    limit = limit_for(kind) if limit is None else limit
    fd, info = open_regular(path)
    try:
        return _read_opened(fd, info, path, kind, limit)
    finally:
        os.close(fd)


def _read_opened(fd: int, info: os.stat_result, path: Path | str, kind: str, limit: int) -> bytes:
    if info.st_size > limit:
        raise _too_large(path, info.st_size, kind, limit)
    try:
        data = _read_fd(fd, path, kind, limit)
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror})") from None
    except MemoryError:
        raise EnvironmentFault(path, f"reading this {kind} ({info.st_size / MB:.1f} MB) ran out of memory",
                               f"free memory on this machine, or lower the cap PATCHWRITE_MAX_{kind.upper()}_MB",
                               reason="out_of_memory") from None  # fmt: skip
    note_read(path, info, data)
    return data


Identity = tuple[int, int, int, int, int]


def identity_of(info: os.stat_result) -> Identity:
    """Return (device, inode, size, mtime_ns, ctime_ns): what a rewrite in place changes even when it keeps the size
    and restores the mtime (the kernel sets ctime on every write and no one can set it back)."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def file_identity(path: Path | str) -> Identity | None:
    """Return `identity_of` a file, None when it cannot be stat'ed: a cache key for its content."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return identity_of(info)


# -- what a verdict read: recorded while a candidate is judged, compared before it is committed ---------
Reads = dict[str, tuple[Identity, bytes]]  # real path -> (identity when read, sha256 of the bytes read)
_reads: contextvars.ContextVar[Reads | None] = contextvars.ContextVar("patchwrite_reads", default=None)
CHANGED = (0, 0, -1, 0, 0)  # the identity of a file read twice with different bytes during one recording


@contextmanager
def recording_reads() -> Iterator[Reads]:
    """Yield the {real path: (identity, sha256)} of every file read through this module (and `note_read`) inside."""
    reads: Reads = {}
    outer = _reads.get()
    token = _reads.set(reads)
    try:
        yield reads
    finally:
        _reads.reset(token)
        if outer is not None:
            replay(reads)


def replay(reads: Reads) -> None:
    """Record again reads made earlier (by a cache that now answers without reading), when a recording is on."""
    current = _reads.get()
    if current is None:
        return
    for key, seen in reads.items():
        if key not in current:
            current[key] = seen
        elif current[key][1] != seen[1]:
            current[key] = (CHANGED, b"")


def note_read(path: Path | str, info: os.stat_result, data: bytes | None = None, digest: bytes | None = None) -> None:
    """Record that a file with this fstat and these bytes (or their sha256) was read, when a recording is on."""
    reads = _reads.get()
    if reads is None:
        return
    key = os.path.realpath(path)
    seen = (identity_of(info), digest if digest is not None else hashlib.sha256(data or b"").digest())
    if key not in reads:
        reads[key] = seen
    elif reads[key][1] != seen[1]:
        reads[key] = (CHANGED, b"")  # two reads saw different bytes: it changed while the candidate was judged


def changed_since(path: str, identity: Identity, digest: bytes) -> str:
    """Return how the file at `path` differs from the identity and sha256 it was read with, or "" when it does not."""
    if identity == CHANGED:
        return "changed between two of its reads"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return "was removed"
    except OSError as exc:
        return f"cannot be read any more ({exc.strerror})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "is no longer a regular file"
        if identity_of(info)[:2] != identity[:2]:
            return "was replaced (a new file under its name)"
        hashed = hashlib.sha256()  # always: timestamps are coarser than two quick writes of the same size
        while chunk := os.read(fd, 8 * MB):
            hashed.update(chunk)
        return "" if hashed.digest() == digest else "was rewritten with other bytes"
    finally:
        os.close(fd)


def read_prefix(path: Path | str, size: int) -> bytes:
    """Return at most the first `size` bytes of a regular file; raise InputError for anything else."""
    fd, _info = open_regular(path)
    try:
        return os.read(fd, size)
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


def decode(data: bytes, path: Path | str, first_line: int = 1) -> str:
    """Return `data` (starting on line `first_line` of `path`) as UTF-8 text; raise InputError naming the line of the
    first invalid byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + first_line
        problem = f"not valid UTF-8 (byte 0x{data[exc.start]:02x})"
        raise InputError(path, problem, line=line, reason="not_utf8") from None


def _lone_surrogates(exc: UnicodeError) -> tuple[bytes, int]:
    """Encode the lone surrogates of a text: the byte `surrogateescape` kept of an undecodable one, any other (from
    JSON: an MCP client's `\\ud800`) as `surrogatepass` spells it."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = bytearray()
    for ch in exc.object[exc.start : exc.end]:
        code = ord(ch)
        out += bytes([code - 0xDC00]) if 0xDC80 <= code <= 0xDCFF else ch.encode("utf-8", "surrogatepass")
    return bytes(out), exc.end


codecs.register_error("patchwrite.text", _lone_surrogates)


def text_bytes(text: str) -> bytes:
    """Return the bytes a text stands for: its UTF-8, a byte kept by `surrogateescape` given back as that byte; never
    raises (the one rule for a text's bytes: what a sandbox copy writes and what `text_digest` hashes)."""
    return text.encode("utf-8", "patchwrite.text")


def text_digest(text: str) -> bytes:
    """Return the sha256 of `text_bytes(text)`: the content key of a text (snapshot digests, verdicts, revisions)."""
    return hashlib.sha256(text_bytes(text)).digest()


#: a file read for a check is kept (in the snapshot's `data`) when it is this small, so the sandbox copy and the
#: other gates of the same check do not read it again; larger ones are read again where needed
HELD_FILE_BYTES = 8 * MB
HELD_TOTAL_BYTES = 64 * MB


def read_held(path: Path | str, kind: str, held: dict[Path, bytes] | None) -> bytes:
    """Return a file's bytes from `held` (what this check already read, by real path), else from disk as
    `read_bytes` reads them, kept in `held` when small (see HELD_FILE_BYTES)."""
    real = Path(os.path.realpath(path))
    if held is not None and real in held:
        return held[real]
    data = read_bytes(path, kind)
    if held is not None:
        hold(held, real, data)
    return data


def hold(held: dict[Path, bytes], real: Path, data: bytes) -> None:
    """Keep a file's bytes in a snapshot's store when they fit its bounds (HELD_FILE_BYTES, HELD_TOTAL_BYTES)."""
    if len(data) <= HELD_FILE_BYTES and sum(map(len, held.values())) + len(data) <= HELD_TOTAL_BYTES:
        held[real] = data


def read_text(path: Path | str, kind: str = "manuscript") -> str:
    """Return the UTF-8 text of a regular file exactly (no newline translation); raise InputError."""
    return decode(read_bytes(path, kind), path)


# outside strings, the brackets that open or close a level; strings skipped whole (escapes included)
_JSON_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _deepest_line(text: str) -> tuple[int, int]:
    # run only after the parser gave up: where the nesting first reaches its maximum, and how deep
    depth = deepest = 0
    at = 0
    for match in _JSON_NESTING.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest, at = depth, match.start()
        elif token in "]}":
            depth -= 1
    return text.count("\n", 0, at) + 1, deepest


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number", name)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text[:40]} is out of range for a number", text)
    return value


def load_json(text: str, source: Path | str, line: int | None = None, finite: bool = False, **hooks: Any) -> Any:
    """Return the JSON value of `text`; raise InputError `source:line: problem` when it is invalid or nested too deep.

    `line` is the line `text` starts on in `source` (a JSON Lines record); `finite` also refuses NaN,
    Infinity and numbers past a float's range, so what is read can be written back as strict JSON.
    `hooks` are passed to json.loads (parse_float, parse_int).
    """
    if finite:
        hooks.setdefault("parse_float", _finite_float)
        hooks["parse_constant"] = _reject_constant
    try:
        return json.loads(text, **hooks)
    except RecursionError:
        # the C scanner recurses once per level: depth, not size, is what a stranger's file can blow up
        where, depth = _deepest_line(text)
        problem = f"nesting too deep ({depth} levels) to be read as JSON"
        raise InputError(source, problem, line=line or where, reason="too_deep") from None
    except json.JSONDecodeError as exc:
        where = exc.lineno + (line - 1 if line else 0)
        raise InputError(source, f"not valid JSON ({exc.msg}, column {exc.colno})", line=where) from None
    except ValueError as exc:  # a hook refused a value; the scanner does not say where, its first spelling does
        token = exc.args[1] if len(exc.args) > 1 else ""
        where = text.count("\n", 0, max(text.find(token), 0)) + 1 if token else 1
        raise InputError(source, f"not valid JSON ({exc.args[0]})", line=line or where) from None


def read_json(path: Path | str, kind: str = "manuscript", finite: bool = True) -> Any:
    """Return the JSON in the file at `path` (strict numbers by default); raise InputError naming line and problem."""
    return load_json(read_text(path, kind), path, finite=finite)


def read_stream(stream: BinaryIO, name: str, kind: str = "edit") -> bytes:
    """Return the bytes of a stream (stdin) read up to the cap for `kind`; raise InputTooLarge past it."""
    limit = limit_for(kind)
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise _too_large(name, None, kind, limit)
    return data


def parse_seconds(text: str | float, what: str = "--timeout") -> float:
    """Return a positive, finite number of seconds; raise UsageError for anything else (inf, nan, 0, -1)."""
    try:
        seconds = float(text)
    except (TypeError, ValueError):
        raise UsageError(what, f"{text!r} is not a number of seconds") from None
    if not math.isfinite(seconds) or seconds <= 0 or seconds > MAX_SECONDS:
        raise UsageError(what, f"{text!r} is not a positive, finite number of seconds (at most {MAX_SECONDS:g})")
    return seconds
