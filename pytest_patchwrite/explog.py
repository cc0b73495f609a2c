"""Experimental logs: every numeric value of a JSON, CSV/TSV, TOML, YAML or text log."""

from __future__ import annotations

import csv
import glob
import io
import json
import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from .transaction import InputError, read_text

# a number standing on its own: not the 16 of `en_sec_16`, nor the 2 of `gpt2`
_NUMERIC = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?!\w|\.\d)")
MAX_DECIMALS = 8


@dataclass
class EvidenceLog:
    """The numbers a set of experimental logs attests, with fast lookup by printed precision."""

    files: list[Path] = field(default_factory=list)
    raw: set[str] = field(default_factory=set)
    values: list[Decimal] = field(default_factory=list)
    _rounded: set[tuple[int, Decimal]] = field(default_factory=set)

    def add(self, raw: str) -> None:
        """Record one numeric string of a log."""
        raw = raw.strip()
        try:
            value = Decimal(raw.replace(",", ""))
        except InvalidOperation:
            return
        if not value.is_finite():
            return
        self.raw.add(raw)
        self.values.append(value)
        # a fraction in the log may be printed as a percentage: 0.914 -> 91.4
        for scaled in (value, value * 100) if abs(value) <= 1 else (value,):
            for places in range(MAX_DECIMALS + 1):
                quantum = Decimal(1).scaleb(-places)
                for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN):
                    self._rounded.add((places, scaled.quantize(quantum, rounding=mode)))

    def attests(self, value: Decimal, decimals: int, printed: str = "", strict: bool = False) -> bool:
        """Return whether a printed number is in the logs: equal, equal after rounding, or after scaling by 100."""
        if strict:
            return printed in self.raw
        if decimals > MAX_DECIMALS:
            return value in self.values
        quantum = Decimal(1).scaleb(-decimals)
        return (decimals, value.quantize(quantum)) in self._rounded


def _walk(data: Any, log: EvidenceLog) -> None:
    if isinstance(data, bool) or data is None:
        return
    if isinstance(data, (int, float)):
        log.add(repr(data) if isinstance(data, float) else str(data))
    elif isinstance(data, str):
        for token in _NUMERIC.findall(data):
            log.add(token)
    elif isinstance(data, dict):
        for value in data.values():
            _walk(value, log)
    elif isinstance(data, (list, tuple)):
        for value in data:
            _walk(value, log)


def load_log_file(path: Path, log: EvidenceLog) -> None:
    """Add every numeric leaf or token of one log file to `log`; raise InputError when it cannot be read."""
    text = read_text(path)
    suffix = path.suffix.lower()
    try:
        if suffix in (".json", ".jsonl"):
            if suffix == ".jsonl":
                for number, line in enumerate(text.splitlines(), start=1):
                    if line.strip():
                        try:
                            _walk(json.loads(line), log)
                        except ValueError as exc:
                            raise InputError(f"{path}:{number}", f"not valid JSON ({exc})") from exc
            else:
                _walk(json.loads(text), log)
        elif suffix in (".csv", ".tsv"):
            delimiter = "\t" if suffix == ".tsv" else ","
            for row in csv.reader(io.StringIO(text), delimiter=delimiter):
                for cell in row:
                    for token in _NUMERIC.findall(cell):
                        log.add(token)
        elif suffix == ".toml":
            import tomllib

            _walk(tomllib.loads(text), log)
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml  # type: ignore[import-untyped]
            except ImportError as exc:
                raise InputError(path, "a YAML log needs PyYAML: pip install PyYAML") from exc
            _walk(yaml.safe_load(text), log)
        else:
            for token in _NUMERIC.findall(text):
                log.add(token)
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(path, f"cannot be parsed as {suffix.lstrip('.').upper()} ({exc})") from exc
    log.files.append(path)


def load_logs(patterns: list[str | Path], base: Path) -> EvidenceLog:
    """Return the evidence of every log matching the patterns (globs allowed), relative to `base`."""
    log = EvidenceLog()
    for pattern in patterns:
        pattern_path = Path(pattern) if Path(pattern).is_absolute() else base / pattern
        matches = sorted(glob.glob(str(pattern_path), recursive=True))
        if not matches:
            raise InputError(pattern_path, "no experimental log matches this name")
        for match in matches:
            load_log_file(Path(match), log)
    return log
