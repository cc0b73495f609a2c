"""Log entries with locators: what one experimental log says, and where (a key path, a CSV cell, a text line).

`explog` gives the pool of every value a set of logs holds; this module gives each value its
place, so a printed number can be bound to exactly one of them: `test.accuracy` and
`runs[3].acc` for JSON, YAML and TOML (and JSON Lines, a `.json` of one value per line too),
`row 3 (model=Ours), column acc` for CSV/TSV (`csvlog`: the row's label is its first cell that is no
number), `line 12` for a text log. Numeric strings (`"91.4%"`, `"1,234"`, `"27.2B"`) are values with a
unit. Values keep the text the log writes. Logs read line by line (CSV/TSV, JSON Lines, text) are parsed piece by piece
(`streamread.Streamed` pieces, or the one text of a small log); a caller that only needs the values
near some printed numbers passes a `numeric.Sieve`, so a log of a million rows is never held in
memory, as text or as entries. `logread` decides how a log is read and caches by content.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..numeric import Sieve, numeric_string, shift
from .explog import _NUMERIC, _Leaf

_WORD = re.compile(r"[A-Za-z][A-Za-z_]*")
_LINE_AT = re.compile(r"^line (\d+)")
_RECORD_AT = re.compile(r"^\[(\d+)\]")
# a line break other than "\n" and "\r\n" (str.splitlines counts these too)
_ODD_BREAK = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]|\r(?!\n)")
_IDENT = re.compile(r"^[A-Za-z_][\w\-]*$")
_STRUCTURED = (".json", ".jsonl", ".toml", ".yaml", ".yml")


@dataclass(frozen=True)
class Entry:
    """One numeric value of a log, at its locator, as the log writes it."""

    log: Path
    at: str  # `test.accuracy`, `runs[3].acc`, `row 3 (model=Ours), column acc`, `line 12`, `mean(column acc)`
    raw: str
    row: str  # which row of the log's table it belongs to (`baseline`, `runs[3]`, `row 3`)
    column: str  # which column (`clean_acc`, `runs[*].acc`, `acc`)
    label: str  # words naming the row (a record's name, a CSV row's first non-numeric cell, a text line)
    rows: int = 1  # how many values its column holds
    kind: str = "leaf"  # leaf, cell, line, mean
    unit: str = ""  # what a numeric string of the log glues to it: `%`, `M`, `B`, `MB` (`27.2B`, `91.4%`)
    scale: int = 0  # the power of ten the unit stands for (`27.2B`: 9), 0 for none and for `%`

    @property
    def value(self) -> Decimal:
        """Return the exact value of the raw text (the number as written, before its unit: 27.2 of `27.2B`)."""
        return Decimal(self.raw)

    @property
    def scaled(self) -> Decimal | None:
        """Return the value with its unit's scale applied (27200000000 for `27.2B`), None past the exponent bound."""
        return shift(Decimal(self.raw), self.scale) if self.scale else Decimal(self.raw)


@dataclass
class LogData:
    """The entries of one log file (all, or those a filter kept), column means, and what the filter dropped."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    means: list[Entry] = field(default_factory=list)
    dropped: int = 0  # cells a filter or the size cap left out

    def at(self, locator: str) -> Entry | None:
        """Return the entry at `locator`, or None when the log holds none there.

        A CSV cell is found by its locator with the row's label (`row 7 (model=Ours), column f1`) and, as bindings
        files written before the label was part of it name it, without (`row 7, column f1`)."""
        index = self.__dict__.get("_by_at")
        if index is None:
            index = {e.at: e for e in (*self.entries, *self.means)}
            for e in self.entries:
                if e.kind == "cell":
                    index.setdefault(_plain_cell(e.row, e.column), e)
            self.__dict__["_by_at"] = index
        return index.get(locator)


def _plain_cell(row: str, column: str) -> str:
    return f"{row}, column {column}"


def _number(text: str) -> tuple[str, str, int] | None:
    """Return (number, unit, scale) when `text` is exactly one number (`91.4`, ` 0.9 `, `91.4%`, `1,234`, `27.2B`)."""
    found = numeric_string(text)
    return found if found is not None and _NUMERIC.fullmatch(found[0]) else None


def _key(path: str, key: object) -> str:
    name = str(key)
    if _IDENT.match(name):
        return f"{path}.{name}" if path else name
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'{path}["{quoted}"]'


def _raw(item: object) -> tuple[str, str, int] | None:
    """Return (number, unit, scale) of a document's leaf when it holds a number."""
    if isinstance(item, bool) or item is None:
        return None
    if isinstance(item, _Leaf):
        return str(item).strip(), "", 0
    if isinstance(item, float):
        return (repr(item), "", 0) if item == item and item not in (float("inf"), float("-inf")) else None
    if isinstance(item, (int, Decimal)):
        return str(item), "", 0
    if isinstance(item, str):
        return _number(item)
    return None


def _record_label(record: dict[Any, Any]) -> str:
    for value in record.values():
        if isinstance(value, str) and _number(value) is None and value.strip():
            return value.strip()[:80]
    return ""


_Leafed = tuple[str, str, str, str, str, str, int]


def _leaves(data: Any, at: str = "", column: str = "", label: str = "") -> Iterator[_Leafed]:
    """Yield (at, raw, row, column, label, unit, scale) of every numeric leaf of a parsed document, in document
    order."""
    # iterative, each container once (shared YAML nodes are walked at their first path)
    stack: list[tuple[Any, str, str, str, str]] = [(data, at, column, label, "")]  # item, path, column, label, parent
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
        found = _raw(item)
        if found is not None:
            yield at, found[0], container, column, label, found[1], found[2]


def document_entries(path: Path, data: Any) -> LogData:
    """Return the entries of a parsed document (each numeric leaf at its key path) and its list-column means."""
    found = list(_leaves(data))
    sizes = Counter(leaf[3] for leaf in found)
    entries = [Entry(path, at, raw, row, col, label, sizes[col], "leaf", unit, scale)
               for at, raw, row, col, label, unit, scale in found]  # fmt: skip
    return LogData(path, entries, _means(path, entries))


def jsonl_entries(path: Path, records: Iterable[Any], sieve: Sieve | None, want: set[str]) -> LogData:
    """Return the entries of a JSON Lines log record by record (`[3].acc`), as `document_entries` reads the list of
    its records; with a `sieve`, only values it keeps (and the locators `want` names) are held."""
    kept: list[_Leafed] = []
    sizes: Counter[str] = Counter()
    sums: dict[str, list[Any]] = {}  # column -> [sum, count] of its exact values, for the means
    wanted = {int(m.group(1)) for locator in want if (m := _RECORD_AT.match(locator))}
    data = LogData(path)
    for n, record in enumerate(records):
        for leaf in _leaves(record, f"[{n}]", "[*]"):
            at, raw, _, column, _, _, scale = leaf
            sizes[column] += 1
            try:
                value = Decimal(raw)
            except ArithmeticError:
                pass
            else:
                if not scale:  # a mean of `7B` and `500M` as written is no number of either
                    total = sums.setdefault(column, [Decimal(0), 0])
                    total[0] += value
                    total[1] += 1
            if sieve is None or _sieved(sieve, raw, scale) or (n in wanted and at in want):
                kept.append(leaf)
            else:
                data.dropped += 1
    data.entries = [Entry(path, at, raw, row, col, label, sizes[col], "leaf", unit, scale)
                    for at, raw, row, col, label, unit, scale in kept]  # fmt: skip
    for column, (total, count) in sums.items():
        if sizes[column] >= 2 and count >= 2:
            mean = total / count
            data.means.append(Entry(path, f"mean({column})", _short(mean), "", column, "mean average", count, "mean"))
    return data


def _sieved(sieve: Sieve, raw: str, scale: int) -> bool:
    """Return whether a value may matter to the sieve as written or, with a unit, at its scale."""
    if sieve.keeps(raw):
        return True
    scaled = shift(Decimal(raw), scale) if scale else None
    return scaled is not None and sieve.keeps(str(scaled))


def _means(path: Path, entries: Iterable[Entry]) -> list[Entry]:
    """Return the mean of every list column (`runs[*].acc`, `scores[*]`) of two or more values."""
    columns: dict[str, list[Decimal]] = {}
    for entry in entries:
        if "[*]" in entry.column and entry.rows >= 2 and not entry.scale:
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


def _line_entries(path: Path, number: int, line: str, keep: Callable[[str, str], bool] | None) -> list[Entry]:
    tokens = list(_NUMERIC.finditer(line))
    if not tokens:
        return []
    entries: list[Entry] = []
    words: str | None = None
    for index, token in enumerate(tokens, start=1):
        at = f"line {number}" if len(tokens) == 1 else f"line {number}, number {index}"
        if keep is not None and not keep(token.group(0), at):
            continue
        if words is None:
            words = " ".join(_WORD.findall(line))[:120]
        before = _WORD.findall(line[: token.start()])
        entries.append(Entry(path, at, token.group(0), f"line {number}", before[-1] if before else "", words,
                             1, "line"))  # fmt: skip
    return entries


def text_entries(
    path: Path, pieces: Iterable[str], sieve: Sieve | None = None, want: set[str] | None = None
) -> LogData:
    """Return the entries of a text log (`line 12`, `line 12, number 2`), read piece by piece; with a `sieve`, only
    the values it keeps (and the locators `want` names) are held."""
    data = LogData(path)
    want = want or set()
    wanted = {int(m.group(1)) for locator in want if (m := _LINE_AT.match(locator))}
    keep = None if sieve is None else (lambda raw, at: sieve.keeps(raw) or at in want)
    number = 0  # lines as str.splitlines counts them (pieces end at a line break, so piece by piece is the same)
    for piece in pieces:
        breaks = piece.count("\n")
        if keep is None or _ODD_BREAK.search(piece) or any(number < w <= number + breaks + 1 for w in wanted):
            for line in piece.splitlines():
                number += 1
                data.entries.extend(_line_entries(path, number, line, keep))
            continue
        # only "\n" (or "\r\n") ends a line here: find the few kept numbers first, then their lines
        kept = set(sieve.keep(_NUMERIC.findall(piece))) if sieve is not None else set()
        done = -1
        for token in _NUMERIC.finditer(piece) if kept else ():
            if token.start() <= done or token.group(0) not in kept:
                continue
            start = piece.rfind("\n", 0, token.start()) + 1
            end = piece.find("\n", token.start())
            end = len(piece) if end < 0 else end
            line = piece[start:end].removesuffix("\r")
            data.entries.extend(_line_entries(path, number + piece.count("\n", 0, start) + 1, line, keep))
            done = end
        number += breaks + (0 if piece.endswith("\n") else 1)
    return data


def is_structured(path: Path) -> bool:
    """Return whether a log is read by key path (JSON, YAML, TOML) rather than as a table or text."""
    return path.suffix.lower() in _STRUCTURED
