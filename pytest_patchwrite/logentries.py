"""Log entries with locators: what one experimental log says, and where (a key path, a CSV cell, a text line).

`explog` gives the pool of every value a set of logs holds; this module gives each value its
place, so a printed number can be bound to exactly one of them: `test.accuracy` and
`runs[3].acc` for JSON, YAML and TOML, `row 3, column acc` for CSV/TSV (plus the row's
label, its first non-numeric cell), `line 12` for a text log. Values keep the text the log
writes. CSV/TSV logs are streamed row by row; a caller that only needs the cells near some
printed numbers passes a `keep` filter, so a log of a million rows is never held in memory.
"""

from __future__ import annotations

import csv
import io
import os
import re
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import islice
from pathlib import Path
from typing import Any

from .errors import InputError
from .explog import _NUMERIC, _json, _Leaf, _yaml
from .inputs import file_identity, limit_for, open_regular, read_text

#: cells of one CSV log kept without a filter (past it only column statistics are kept)
MAX_KEPT_CELLS = 200_000
_CACHE: OrderedDict[tuple[Any, ...], LogData] = OrderedDict()
_CACHED = 4
_IDENT = re.compile(r"^[A-Za-z_][\w\-]*$")
_CELL_AT = re.compile(r"^row (\d+), column (.+)$")
_CSV_SUFFIXES = (".csv", ".tsv", ".tab")
_STRUCTURED = (".json", ".jsonl", ".toml", ".yaml", ".yml")


@dataclass(frozen=True)
class Entry:
    """One numeric value of a log, at its locator, as the log writes it."""

    log: Path
    at: str  # `test.accuracy`, `runs[3].acc`, `row 3, column acc`, `line 12`, `mean(column acc)`
    raw: str
    row: str  # which row of the log's table it belongs to (`baseline`, `runs[3]`, `row 3`)
    column: str  # which column (`clean_acc`, `runs[*].acc`, `acc`)
    label: str  # words naming the row (a record's name, a CSV row's first non-numeric cell, a text line)
    rows: int = 1  # how many values its column holds
    kind: str = "leaf"  # leaf, cell, line, mean

    @property
    def value(self) -> Decimal:
        """Return the exact value of the raw text."""
        return Decimal(self.raw)


@dataclass
class LogData:
    """The entries of one log file (all, or those a filter kept), column means, and what the filter dropped."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    means: list[Entry] = field(default_factory=list)
    dropped: int = 0  # cells a filter or the size cap left out

    def at(self, locator: str) -> Entry | None:
        """Return the entry at `locator`, or None when the log holds none there."""
        index = self.__dict__.get("_by_at")
        if index is None:
            index = {e.at: e for e in (*self.entries, *self.means)}
            self.__dict__["_by_at"] = index
        return index.get(locator)


def _number(text: str) -> str | None:
    """Return `text` as a numeric string when it is exactly one number (`91.4`, ` 0.9 `, `91.4%`), else None."""
    stripped = text.strip().rstrip("%").strip()
    if not stripped or len(stripped) > 60:
        return None
    found = _NUMERIC.fullmatch(stripped)
    return stripped if found else None


def _key(path: str, key: object) -> str:
    name = str(key)
    if _IDENT.match(name):
        return f"{path}.{name}" if path else name
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'{path}["{quoted}"]'


def _raw(item: object) -> str | None:
    if isinstance(item, bool) or item is None:
        return None
    if isinstance(item, _Leaf):
        return str(item).strip()
    if isinstance(item, float):
        return repr(item) if item == item and item not in (float("inf"), float("-inf")) else None
    if isinstance(item, (int, Decimal)):
        return str(item)
    if isinstance(item, str):
        return _number(item)
    return None


def _record_label(record: dict[Any, Any]) -> str:
    for value in record.values():
        if isinstance(value, str) and _number(value) is None and value.strip():
            return value.strip()[:80]
    return ""


def _walk(data: Any, path: Path) -> tuple[list[Entry], list[Entry]]:
    """Return the entries of a parsed document (each numeric leaf at its key path) and its list-column means."""
    found: list[tuple[str, str, str, str, str]] = []  # at, raw, row, column, label
    # iterative, each container once (shared YAML nodes are walked at their first path)
    stack: list[tuple[Any, str, str, str, str]] = [(data, "", "", "", "")]  # item, path, column, label, container
    seen: set[int] = set()
    while stack:
        item, at, column, label, container = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, dict):
                own = _record_label(item) or label or re.split(r"[.\[]", at)[-1].rstrip("]")
                for key, value in reversed(list(item.items())):
                    stack.append((value, _key(at, key), _key(column, key), own, at))
            else:
                for index in range(len(item) - 1, -1, -1):
                    stack.append((item[index], f"{at}[{index}]", f"{column}[*]", label, at))
            continue
        raw = _raw(item)
        if raw is not None:
            found.append((at, raw, container, column, label))
    sizes: dict[str, int] = {}
    for _, _, _, column, _ in found:
        sizes[column] = sizes.get(column, 0) + 1
    entries = [Entry(path, at, raw, row, col, label, sizes[col]) for at, raw, row, col, label in found]
    return entries, _means(path, entries)


def _means(path: Path, entries: Iterable[Entry]) -> list[Entry]:
    """Return the mean of every list column (`runs[*].acc`, `scores[*]`) of two or more values."""
    columns: dict[str, list[Decimal]] = {}
    for entry in entries:
        if "[*]" in entry.column and entry.rows >= 2:
            try:
                columns.setdefault(entry.column, []).append(Decimal(entry.raw))
            except ArithmeticError:
                continue
    out = []
    for column, values in columns.items():
        if len(values) >= 2:
            mean = sum(values, Decimal(0)) / len(values)
            out.append(Entry(path, f"mean({column})", _short(mean), "", column, "mean average", len(values), "mean"))
    return out


def _short(value: Decimal | float) -> str:
    """Return a mean as a plain string of at most 12 significant digits (exact enough for any printed form)."""
    return format(float(value), ".12g")


def _text_entries(text: str, path: Path) -> list[Entry]:
    entries: list[Entry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = list(_NUMERIC.finditer(line))
        words = " ".join(re.findall(r"[A-Za-z][A-Za-z_]*", line))[:120]
        for index, token in enumerate(tokens, start=1):
            at = f"line {number}" if len(tokens) == 1 else f"line {number}, number {index}"
            before = re.findall(r"[A-Za-z][A-Za-z_]*", line[: token.start()])
            entries.append(Entry(path, at, token.group(0), f"line {number}", before[-1] if before else "", words,
                                 1, "line"))  # fmt: skip
    return entries


def _delimiter(path: Path, first: str) -> str:
    if path.suffix.lower() in (".tsv", ".tab"):
        return "\t"
    counts = {d: first.count(d) for d in (",", "\t", ";", "|")}
    return max(counts, key=lambda d: counts[d]) if any(counts.values()) else ","


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _numeric_columns(first: list[list[str]]) -> list[int]:
    """Return the columns whose first rows hold a number (the others hold labels, never values)."""
    width = max((len(row) for row in first), default=0)
    return [j for j in range(width) if any(j < len(row) and _is_number(row[j]) for row in first)]


def _csv_entries(path: Path, keep: list[float] | None, want: set[str], data: LogData) -> None:
    """Stream a CSV/TSV log: keep the cells inside `keep`'s intervals (all, up to a cap, without it) and `want`."""
    fd, info = open_regular(path)
    limit = limit_for("log")
    if info.st_size > limit:
        os.close(fd)
        raise InputError(path, f"is {info.st_size / 2**20:.1f} MB; the cap for a log is {limit / 2**20:g} MB")
    wanted: dict[int, set[str]] = {}
    for locator in want:
        if m := _CELL_AT.match(locator):
            wanted.setdefault(int(m.group(1)), set()).add(m.group(2))
    with open(fd, encoding="utf-8", newline="", errors="strict") as handle:
        try:
            first_line = handle.readline()
            reader = csv.reader(io.StringIO(first_line), delimiter=_delimiter(path, first_line))
            header = next(reader, [])
            delimiter = _delimiter(path, first_line)
            rest = csv.reader(handle, delimiter=delimiter)
            if header and not any(_is_number(c) for c in header):
                names = [c.strip() or str(i + 1) for i, c in enumerate(header)]
                rows: Iterable[list[str]] = rest
            else:
                names = [str(i + 1) for i in range(len(header))]
                rows = _chain([header], rest)
            rows = iter(rows)
            first = list(islice(rows, 50))
            numeric = _numeric_columns(first)
            while len(names) < max(numeric, default=-1) + 1:
                names.append(str(len(names) + 1))
            sums = [0.0] * len(names)
            counts = [0] * len(names)
            kept: list[tuple[int, int, str, str]] = []
            last_row = 0
            bounds = keep if keep is not None else []
            wanted_cols = {r: {names.index(n) for n in ns if n in names} for r, ns in wanted.items()}
            for r, row in enumerate(_chain(first, rows), start=1):
                last_row = r
                label = None
                here = wanted_cols.get(r)
                for j in numeric:
                    try:
                        v = float(row[j])
                    except (ValueError, IndexError):
                        continue
                    sums[j] += v
                    counts[j] += 1
                    if (
                        (keep is None and len(kept) < MAX_KEPT_CELLS)
                        or (keep is not None and bisect_right(bounds, v) & 1)
                        or (here is not None and j in here)
                    ):
                        if label is None:
                            label = next((c.strip() for c in row if c.strip() and not _is_number(c)), "")
                        kept.append((r, j, row[j].strip(), label))
                    else:
                        data.dropped += 1
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not valid UTF-8 ({exc.reason})") from None
        except csv.Error as exc:
            raise InputError(path, f"cannot be parsed as CSV ({exc})") from None
    for r, j, raw, label in kept:
        words = f"{label} final last" if r == last_row and last_row > 1 else label
        data.entries.append(Entry(path, f"row {r}, column {names[j]}", raw, f"row {r}", names[j], words,
                                  counts[j], "cell"))  # fmt: skip
    for j, name in enumerate(names):
        if counts[j] >= 2:
            mean = sums[j] / counts[j]
            data.means.append(Entry(path, f"mean(column {name})", _short(mean), "", name, "mean average",
                                    counts[j], "mean"))  # fmt: skip


def _chain(first: list[list[str]], rest: Iterable[list[str]]) -> Iterable[list[str]]:
    yield from first
    yield from rest


def load_entries(path: Path, keep: list[float] | None = None, want: Iterable[str] = (), key: object = None) -> LogData:
    """Return the entries of one log; raise InputError when it cannot be read.

    `keep` (sorted interval bounds, `binder.prefilter`) filters the cells of a CSV/TSV log
    (structured and text logs keep every value);
    `want` names locators to keep whatever the filter says; `key` identifies the filter for the
    cache (the same file, filter and locators are parsed once while the file is unchanged).
    """
    want = set(want)
    cache_key = (str(path), file_identity(path), key, frozenset(want) if keep is not None else None)
    if key is not None or keep is None:
        hit = _CACHE.get(cache_key)
        if hit is not None:
            _CACHE.move_to_end(cache_key)
            return hit
    data = LogData(path)
    suffix = path.suffix.lower()
    try:
        if suffix in _CSV_SUFFIXES:
            _csv_entries(path, keep, want, data)
        else:
            text = read_text(path, kind="log")
            if suffix == ".jsonl":
                records = [_json(line, path, n) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
                data.entries, data.means = _walk(records, path)
            elif suffix == ".json":
                data.entries, data.means = _walk(_json(text, path), path)
            elif suffix == ".toml":
                import tomllib

                data.entries, data.means = _walk(tomllib.loads(text, parse_float=Decimal), path)
            elif suffix in (".yaml", ".yml"):
                data.entries, data.means = _walk(_yaml(text, path), path)
            else:
                data.entries = _text_entries(text, path)
    except InputError:
        raise
    except RecursionError:
        raise InputError(path, f"nested too deeply to be read as {suffix.lstrip('.').upper()}") from None
    except ValueError as exc:
        raise InputError(path, f"cannot be parsed as {suffix.lstrip('.').upper()} ({exc})") from None
    if key is not None or keep is None:
        _CACHE[cache_key] = data
        while len(_CACHE) > _CACHED:
            _CACHE.popitem(last=False)
    return data


def is_structured(path: Path) -> bool:
    """Return whether a log is read by key path (JSON, YAML, TOML) rather than as a table or text."""
    return path.suffix.lower() in _STRUCTURED
