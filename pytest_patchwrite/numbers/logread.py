"""Reading a manuscript's declared logs: once per check, for the pool rule and the bindings lock alike.

A log of at most `inputs.HELD_FILE_BYTES` is read whole into the snapshot's store (`inputs.read_held`),
so the other gates and the sandbox copy do not read it again. A larger one is never held:

- CSV/TSV, JSON Lines and text logs are streamed (`streamread.Streamed`: pieces of whole lines, hashed
  as they are read). Only values that may matter are kept: the pool keeps the tokens that could
  attest one of the manuscript's printed numbers (`numeric.Sieve.around`), the entries those the
  binder's prefilter lets through (`binder.prefilter`) and the locators the bindings file names.
- JSON, YAML and TOML are parsed as one document, up to the `log_document` cap
  (`PATCHWRITE_MAX_LOG_DOCUMENT_MB`, 64 MB): past it, the error names the cap and the formats that stream.

Parsed logs are kept in memory by real path and sha256 of their bytes (a big log is hashed in a
first pass, then parsed only when the cache holds no answer that covers the sieves asked for), so
the same bytes are not parsed twice and different bytes never share an answer.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from ..errors import InputTooLarge
from ..files import envfaults
from ..files.inputs import MB, decode, limit_for, read_bytes
from ..files.paths import Boundary
from ..files.streamread import Streamed, digest_held
from ..numeric import Sieve
from .csvlog import CSV_SUFFIXES, csv_entries
from .explog import (
    EvidenceLog,
    document_tokens,
    is_document,
    jsonl_records,
    parse_document,
    parsing,
    resolve_logs,
    starts_jsonl,
    text_tokens,
)
from .logentries import LogData, document_entries, jsonl_entries, text_entries

#: parsed logs kept in memory (a manuscript's few logs, HEAD's and a candidate's sieves)
_CACHED = 8
_PARSED: OrderedDict[tuple[str, bytes], Parsed] = OrderedDict()
_POOLS: OrderedDict[tuple[int, ...], tuple[list[Parsed], EvidenceLog]] = OrderedDict()


@dataclass
class Parsed:
    """What one log's bytes say: the pool's tokens and the entries, each with the sieve it was kept by (None: all)."""

    path: Path
    digest: bytes
    streamed: bool
    tokens: set[str] | None = None
    token_sieve: Sieve | None = None
    data: LogData | None = None
    data_sieve: Sieve | None = None
    want: frozenset[str] = field(default_factory=frozenset)

    def answers(self, pool: Sieve | None, need_pool: bool, entries: Sieve | None, want: set[str] | None) -> bool:
        """Return whether this parse holds everything a request asks (what a wider sieve kept covers a narrower)."""
        if need_pool and (self.tokens is None or not _covers(self.token_sieve, pool)):
            return False
        if want is not None:
            if self.data is None or not want <= self.want:
                return False
            if self.data_sieve is None:  # everything, unless a cap dropped cells: then only for the same request
                fits = not self.data.dropped or entries is None
            else:
                fits = entries is not None and self.data_sieve.covers(entries)
            if not fits:
                return False
        return True


def _covers(kept: Sieve | None, asked: Sieve | None) -> bool:
    return kept is None or (asked is not None and kept.covers(asked))


def _wider(old: Sieve | None, new: Sieve | None) -> Sieve | None:
    return None if old is None or new is None else old.union(new)


@dataclass
class LogSet:
    """The declared logs of one check: the pool over all of them and, when asked, each one's entries."""

    files: list[Path]
    parsed: list[Parsed]
    pool: EvidenceLog = field(default_factory=EvidenceLog)  # empty unless asked for

    @property
    def datas(self) -> dict[Path, LogData]:
        """Return {resolved path: entries} of every log (the binder's input)."""
        return {p.path.resolve(): p.data for p in self.parsed if p.data is not None}


def read_log(
    path: Path,
    held: dict[Path, bytes] | None = None,
    pool: Sieve | None = None,
    entries: Sieve | None = None,
    want: Iterable[str] | None = None,
    need_pool: bool = True,
) -> Parsed:
    """Return one log parsed: its pool tokens (when `need_pool`) and, when `want` is given, its entries.

    `pool` and `entries` are the sieves a streamed log is kept by (None: everything); `want` names
    the locators the entries must hold whatever the sieve says.
    """
    want_set = set(want) if want is not None else None
    digest, raw = digest_held(path, "log", held)
    key = (str(path), digest)
    hit = _PARSED.get(key)
    if hit is not None:
        _PARSED.move_to_end(key)
        if hit.answers(pool, need_pool, entries, want_set):
            return hit
        # ask for what the earlier parse held too, so HEAD's and a candidate's sieves settle on one parse
        if hit.tokens is not None:
            pool, need_pool = (_wider(hit.token_sieve, pool) if need_pool else hit.token_sieve), True
        if hit.data is not None:
            entries = _wider(hit.data_sieve, entries) if want_set is not None else hit.data_sieve
            want_set = {*(want_set or ()), *hit.want}
    parsed = _parse(path, digest, raw, pool if need_pool else None, need_pool, entries, want_set)
    _PARSED[(str(path), parsed.digest)] = parsed
    while len(_PARSED) > _CACHED:
        _PARSED.popitem(last=False)
    return parsed


def _parse(
    path: Path, digest: bytes, raw: bytes | None, pool: Sieve | None, need_pool: bool, entries: Sieve | None,
    want: set[str] | None,
) -> Parsed:  # fmt: skip
    streamed = raw is None
    out = Parsed(path, digest, streamed, token_sieve=pool if streamed else None, want=frozenset(want or ()))
    suffix = path.suffix.lower()
    with parsing(path):
        stream = Streamed(path, "log") if streamed and (suffix == ".json" or not is_document(path)) else None
        pieces: Iterator[str] = iter(stream) if stream is not None else iter(())
        jsonl = suffix == ".jsonl"
        if stream is not None and suffix == ".json":  # one JSON value per line, whatever the extension
            head, pieces = _head(pieces)
            jsonl = starts_jsonl("".join(head))
            pieces = chain(head, pieces)
        if is_document(path) and not jsonl:
            document = parse_document(path, _document_text(path, raw, pieces if stream is not None else None))
            out.token_sieve = None
            if need_pool:
                out.tokens = set(document_tokens(document))
            if want is not None:
                out.data = document_entries(path, document)
            if stream is not None and stream.digest is not None:
                out.digest = stream.digest
            return out
        if stream is None:
            pieces = iter([decode(raw or b"", path)])
        tokens: set[str] = set()
        keep = pool if streamed else None
        if jsonl:
            records: Iterator[Any] = jsonl_records(path, pieces)
            if need_pool:
                records = _tapped(records, lambda record: _add(tokens, document_tokens(record), keep))
        else:
            if need_pool:
                pieces = _tapped(pieces, lambda piece: _add(tokens, text_tokens(piece), keep))
            records = iter(())
        if want is not None:
            sieve = entries if streamed else None  # a held log keeps every entry (a CSV up to its cell cap)
            if jsonl:
                out.data = jsonl_entries(path, records, sieve, want)
            elif suffix in CSV_SUFFIXES:
                out.data = csv_entries(path, pieces, sieve, want)
            else:
                out.data = text_entries(path, pieces, sieve, want)
            out.data_sieve = sieve
        for _ in records if jsonl else pieces:
            pass  # whatever the entries did not read still counts (and is hashed)
        if need_pool:
            out.tokens = tokens
    if stream is not None and stream.digest is not None:
        out.digest = stream.digest  # the bytes parsed, should they differ from the bytes hashed a moment ago
    return out


def _head(pieces: Iterator[str]) -> tuple[list[str], Iterator[str]]:
    """Return the first pieces of a stream, up to its second non-blank line (or all of it), and the rest."""
    head: list[str] = []
    lines = 0
    for piece in pieces:
        head.append(piece)
        lines += sum(1 for line in piece.splitlines() if line.strip())
        if lines >= 2:
            break
    return head, pieces


def _tapped(items: Iterable[Any], see: Any) -> Iterator[Any]:
    for item in items:
        see(item)
        yield item


def _add(tokens: set[str], found: Iterable[str], keep: Sieve | None) -> None:
    tokens.update(found if keep is None else keep.keep(found if isinstance(found, list) else list(found)))


def _document_text(path: Path, raw: bytes | None, pieces: Iterable[str] | None = None) -> str:
    """Return the text of a log parsed as one document (its bytes, or the `pieces` of its stream), refusing one past
    the `log_document` cap."""
    cap = limit_for("log_document")
    size = len(raw) if raw is not None else path.stat().st_size
    if size > cap:
        raise InputTooLarge(path, f"is {size / MB:.1f} MB; a {path.suffix.lstrip('.').upper()} log is parsed whole "
                            f"and may hold {cap / MB:g} MB (raise PATCHWRITE_MAX_LOG_DOCUMENT_MB, or write it as "
                            "JSON Lines or CSV, which are read as streams)")  # fmt: skip
    try:
        if pieces is not None:
            return "".join(pieces)
        if raw is None:
            raw = read_bytes(path, "log", limit=cap)
        return decode(raw, path)
    except MemoryError:  # the bytes fitted, their text did not
        raise envfaults.out_of_memory(path, "this experimental log") from None


def read_logs(
    paths: list[Path],
    held: dict[Path, bytes] | None = None,
    pool: Sieve | None = None,
    entries: Sieve | None = None,
    want: dict[Path, set[str]] | None = None,
    need_pool: bool = True,
) -> LogSet:
    """Return the logs read once each: the pool over all of them (when `need_pool`) and, when `want` is given
    ({resolved log path: locators}), every log's entries."""
    parsed = [
        read_log(path, held, pool, entries, None if want is None else want.get(path.resolve(), set()), need_pool)
        for path in paths
    ]
    out = LogSet(paths, parsed)
    if need_pool:
        out.pool = _pool_of(parsed)
    return out


def _pool_of(parsed: list[Parsed]) -> EvidenceLog:
    key = tuple(id(p) for p in parsed)
    hit = _POOLS.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], parsed, strict=True)):
        _POOLS.move_to_end(key)
        return hit[1]
    log = EvidenceLog()
    for p in parsed:
        log.add_many(p.tokens or ())
        log.files.append(p.path)
    _POOLS[key] = (parsed, log)
    while len(_POOLS) > 2:
        _POOLS.popitem(last=False)
    return log


def load_logs(
    patterns: list[str | Path],
    base: Path,
    boundary: Boundary | None = None,
    held: dict[Path, bytes] | None = None,
    sieve: Sieve | None = None,
) -> EvidenceLog:
    """Return the pool of every log matching the patterns (globs allowed, relative to `base`, inside `boundary`).

    A pattern leading outside raises OutsideTree naming it as written. `held`: the snapshot's
    store of bytes already read; `sieve`: what a streamed log keeps (None: every value). The result
    is shared while the files hold the same bytes; treat it as read-only.
    """
    return read_logs(resolve_logs(patterns, base, boundary), held, sieve).pool


def load_entries(path: Path, sieve: Sieve | None = None, want: Iterable[str] = ()) -> LogData:
    """Return the entries of one log (`sieve`: what a CSV or a streamed log keeps); raise InputError if it is bad."""
    data = read_log(path, None, None, sieve, want, need_pool=False).data
    assert data is not None
    return data
