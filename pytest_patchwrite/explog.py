"""Experimental logs: every numeric value of a JSON, CSV/TSV, TOML, YAML or text log."""

from __future__ import annotations

import glob
import hashlib
import os
import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from . import envfaults
from .errors import InputError
from .inputs import decode, load_json, read_held, read_text
from .numeric import NumberIndex
from .paths import Boundary

# a number standing on its own: not the 16 of `en_sec_16`, nor the 2 of `gpt2`; no two quantifiers can
# share a digit, so a long run of digits is scanned in linear time
_NUMERIC = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?!\w|\.\d)")
#: how many loaded log sets stay in memory (one per manuscript being checked, in practice)
_CACHED_LOGS = 2
_LOADED: OrderedDict[tuple[tuple[str, bytes], ...], EvidenceLog] = OrderedDict()
#: YAML aliases allowed in one log (an alias bomb needs thousands)
MAX_YAML_ALIASES = 100


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


def _walk(data: Any, log: EvidenceLog) -> None:
    # iterative, each container once: deep nesting needs no stack, shared YAML nodes are not re-walked
    stack, seen = [data], set()
    while stack:
        item = stack.pop()
        if isinstance(item, bool) or item is None:
            continue
        if isinstance(item, _Leaf):
            log.add(item)
        elif isinstance(item, (int, float, Decimal)):
            log.add(repr(item) if isinstance(item, float) else str(item))
        elif isinstance(item, str):
            log.add_many(_NUMERIC.findall(item))
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
    it cannot be read."""
    try:
        text = read_text(path, kind="log") if text is None else text
    except MemoryError:  # the bytes fitted, their text did not
        raise envfaults.out_of_memory(path, "this experimental log") from None
    load_log_text(path, text, log)


def load_log_text(path: Path, text: str, log: EvidenceLog) -> None:
    """Add every numeric leaf or token of `text`, read as the log `path` (its suffix decides), to `log`."""
    suffix = path.suffix.lower()
    try:
        if suffix in (".json", ".jsonl"):
            if suffix == ".jsonl":
                for number, line in enumerate(text.splitlines(), start=1):
                    if line.strip():
                        _walk(_json(line, path, number), log)
            else:
                _walk(_json(text, path), log)
        elif suffix == ".toml":
            import tomllib

            _walk(tomllib.loads(text, parse_float=Decimal), log)
        elif suffix in (".yaml", ".yml"):
            _walk(_yaml(text, path), log)
        else:
            # CSV and TSV too: a cell's numbers are the numbers its text holds, and the
            # separators stop a number, so no CSV parser (nor its field-size limit) is needed
            log.add_many(_NUMERIC.findall(text))
    except InputError:
        raise
    except RecursionError:
        raise InputError(path, f"nested too deeply to be read as {suffix.lstrip('.').upper()}") from None
    except MemoryError:
        raise envfaults.out_of_memory(path, "this experimental log") from None
    except ValueError as exc:
        raise InputError(path, f"cannot be parsed as {suffix.lstrip('.').upper()} ({exc})") from None
    log.files.append(path)


def load_logs(
    patterns: list[str | Path], base: Path, boundary: Boundary | None = None, held: dict[Path, bytes] | None = None
) -> EvidenceLog:
    """Return the evidence of every log matching the patterns (globs allowed), relative to `base`.

    Only files inside `boundary` (by default the repository holding `base`) are read;
    a pattern leading outside raises OutsideTree naming it as written. The result is shared
    while the files hold the same bytes (keyed by their content hashes): a gate checks a candidate and
    its HEAD against the same logs, and the same bytes are parsed once per process. `held`: the
    snapshot's store of bytes already read (`inputs.read_held`). Treat the result as read-only.
    """
    paths = resolve_logs(patterns, base, boundary)
    data = [read_held(path, "log", held) for path in paths]
    key = tuple((str(path), hashlib.sha256(raw).digest()) for path, raw in zip(paths, data, strict=True))
    if key in _LOADED:
        _LOADED.move_to_end(key)
        return _LOADED[key]
    log = EvidenceLog()
    for path, raw in zip(paths, data, strict=True):
        try:
            text = decode(raw, path)
        except MemoryError:  # the bytes fitted, their text did not
            raise envfaults.out_of_memory(path, "this experimental log") from None
        load_log_file(path, log, text)
    _LOADED[key] = log
    while len(_LOADED) > _CACHED_LOGS:
        _LOADED.popitem(last=False)
    return log


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
            raise InputError(pattern_path, "no experimental log matches this name")
        paths.extend(Path(match) for match in matches)
    return paths
