"""Experimental logs: every numeric value of a JSON, CSV/TSV, TOML, YAML or text log (the pool rule's evidence).

How a log is read once per check (held, or streamed when large) is `logread`'s; this module parses.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import envfaults
from ..files.inputs import load_json, read_text
from ..files.paths import Boundary
from ..files.streamread import Streamed
from ..numeric import NumberIndex

# a number standing on its own: not the 16 of `en_sec_16`, nor the 2 of `gpt2`; no two quantifiers can
# share a digit, so a long run of digits is scanned in linear time
_NUMERIC = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?!\w|\.\d)")
#: YAML aliases allowed in one log (an alias bomb needs thousands)
MAX_YAML_ALIASES = 100
_DOCUMENTS = (".json", ".toml", ".yaml", ".yml")


class _Leaf(str):
    """A number's text as the log printed it (JSON parse_float/parse_int), never converted to float."""


@dataclass
class EvidenceLog:
    """The numbers a set of experimental logs attests, indexed for lookup at any printed precision."""

    files: list[Path] = field(default_factory=list)
    index: NumberIndex = field(default_factory=NumberIndex)

    @property
    def raw(self) -> set[str]:
        """Return every numeric string of the logs as printed (what `strict` matching compares)."""
        return self.index.tokens

    def add(self, raw: str) -> None:
        """Record one numeric string of a log."""
        self.index.add_tokens((raw.strip(),))

    def add_many(self, tokens: Iterable[str]) -> None:
        """Record many numeric strings; each distinct one is parsed once, when first asked about."""
        self.index.add_tokens(tokens)

    def attests(self, value: Decimal, printed: str = "", strict: bool = False) -> bool:
        """Return whether a printed number is in the logs: equal, equal after rounding to its printed precision,
        or after scaling by 100; `strict` asks for the same text."""
        if strict:
            return printed in self.raw
        return self.index.rounds_to(value)


def document_tokens(data: Any) -> Iterator[str]:
    """Yield every numeric leaf of a parsed log document as printed, and the numbers its strings hold."""
    # iterative, each container once: deep nesting needs no stack, shared YAML nodes are not re-walked
    stack, seen = [data], set()
    while stack:
        item = stack.pop()
        if isinstance(item, bool) or item is None:
            continue
        if isinstance(item, _Leaf):
            yield item.strip()
        elif isinstance(item, (int, float, Decimal)):
            yield repr(item) if isinstance(item, float) else str(item)
        elif isinstance(item, str):
            yield from _NUMERIC.findall(item)
        elif isinstance(item, (dict, list, tuple)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)


def _yaml(text: str, path: Path) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError as exc:
        raise InputError(path, "a YAML log needs PyYAML: pip install PyYAML") from exc

    class BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]
        aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_YAML_ALIASES:
                    mark = self.peek_event().start_mark
                    raise InputError(path, f"more than {MAX_YAML_ALIASES} YAML aliases", line=mark.line + 1)
            return super().compose_node(parent, index)

    try:
        return yaml.load(text, Loader=BoundedLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(path, f"cannot be parsed as YAML ({problem})", line=line) from None


def _json(text: str, path: Path, line: int | None = None) -> Any:
    return load_json(text, path, line, parse_float=_Leaf, parse_int=_Leaf)


def load_log_file(path: Path, log: EvidenceLog, text: str | None = None) -> None:
    """Add every numeric leaf or token of one log file (its `text` when already read) to `log`; raise InputError when
    it cannot be read. A log read line by line is streamed, never held whole."""
    if text is None and not is_document(path):
        with parsing(path):
            log.add_many(line_tokens(path, Streamed(path, "log")))
        log.files.append(path)
        return
    try:
        text = read_text(path, kind="log") if text is None else text
    except MemoryError:  # the bytes fitted, their text did not
        raise envfaults.out_of_memory(path, "this experimental log") from None
    load_log_text(path, text, log)


def load_log_text(path: Path, text: str, log: EvidenceLog) -> None:
    """Add every numeric leaf or token of `text`, read as the log `path` (its suffix decides), to `log`."""
    with parsing(path):
        if is_document(path):
            log.add_many(document_tokens(parse_document(path, text)))
        else:
            log.add_many(line_tokens(path, [text]))
    log.files.append(path)


def is_document(path: Path) -> bool:
    """Return whether a log is parsed as one document (JSON, TOML, YAML) rather than line by line."""
    return path.suffix.lower() in _DOCUMENTS


def parse_document(path: Path, text: str) -> Any:
    """Return the parsed JSON, TOML or YAML document of a log (numbers kept as printed: `_Leaf`, Decimal)."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return _json_or_lines(text, path)
    if suffix == ".toml":
        import tomllib

        return tomllib.loads(text, parse_float=Decimal)
    return _yaml(text, path)


def _json_or_lines(text: str, path: Path) -> Any:
    """Return a `.json` log's document, or the list of its records when it holds one JSON value per line."""
    try:
        return _json(text, path)
    except InputError as exc:
        if "(Extra data" not in exc.problem:
            raise
    try:  # a complete value, then more: a profiler's export of one object per line
        return list(jsonl_records(path, [text]))
    except InputError as exc:
        raise InputError(path, f"{exc.problem} (read as JSON Lines: it holds more than one JSON value)",
                         line=exc.line) from None  # fmt: skip


def starts_jsonl(head: str) -> bool:
    """Return whether the start of a `.json` log reads as JSON Lines: a first line holding a whole JSON value, then
    another non-blank line (`head`: at least its first line; what more there is of the file)."""
    lines = [line for line in head.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    try:
        json.loads(lines[0])
    except (ValueError, RecursionError):
        return False
    return True


def jsonl_records(path: Path, pieces: Iterable[str]) -> Iterator[Any]:
    """Yield the record of every non-blank line of a JSON Lines log, read piece by piece."""
    number = 0
    for piece in pieces:
        for line in piece.splitlines():
            number += 1
            if line.strip():
                yield _json(line, path, number)


def line_tokens(path: Path, pieces: Iterable[str]) -> Iterator[str]:
    """Yield the numeric tokens of a log read line by line (JSON Lines records; CSV, TSV and text as text)."""
    if path.suffix.lower() == ".jsonl":
        for record in jsonl_records(path, pieces):
            yield from document_tokens(record)
        return
    for piece in pieces:
        yield from text_tokens(piece)


def text_tokens(text: str) -> list[str]:
    """Return the numeric tokens of a log's text (or of a piece of it that ends at a line break)."""
    # CSV and TSV too: a cell's numbers are the numbers its text holds, and the separators stop a
    # number, so no CSV parser (nor its field-size limit) is needed
    return _NUMERIC.findall(text)


@contextmanager
def parsing(path: Path) -> Iterator[None]:
    """Turn what a parser raises on a stranger's log into an InputError naming it (out of memory: an environment
    fault)."""
    suffix = path.suffix.lower().lstrip(".").upper() or "TEXT"
    try:
        yield
    except InputError:
        raise
    except RecursionError:
        raise InputError(path, f"nested too deeply to be read as {suffix}") from None
    except MemoryError:
        raise envfaults.out_of_memory(path, "this experimental log") from None
    except ValueError as exc:
        raise InputError(path, f"cannot be parsed as {suffix} ({exc})") from None


class NoLogMatch(InputError):
    """A declared experimental log name (or glob) that matches no file."""

    def __init__(self, path: Path, name: str) -> None:
        super().__init__(path, "no experimental log matches this name")
        self.name = name


def resolve_logs(patterns: list[str | Path], base: Path, boundary: Boundary | None = None) -> list[Path]:
    """Return the log files the patterns (globs allowed, relative to `base`) name, inside `boundary`.

    Raise OutsideTree for a pattern leading outside, InputError for one that matches nothing.
    """
    boundary = boundary or Boundary.for_directory(base)
    paths: list[Path] = []
    for pattern in patterns:
        name = str(pattern)
        pattern_path = Path(pattern) if Path(pattern).is_absolute() else base / pattern
        if glob.has_magic(name):
            matches = boundary.glob(str(pattern_path), base, name)
        else:
            real = boundary.require(pattern_path, name, shared=True)  # before looking: no existence oracle
            matches = [real] if os.path.lexists(real) else []
        if not matches:
            raise NoLogMatch(pattern_path, name)
        paths.extend(Path(match) for match in matches)
    return paths
