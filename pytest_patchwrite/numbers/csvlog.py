"""CSV and TSV logs as entries: each numeric cell at `row 3 (model=Ours), column acc`, and every column's mean.

Part of `logentries` (what a log says, and where), split out because a table has its own concerns: which first
row is a header (names, or positions such as pandas' `,0,1,2`) and which is data, which cell labels a row,
numeric strings in cells (`91.4%`, `"1,234"`, `27.2B`), and a sieve over a million rows.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable
from itertools import chain, islice
from pathlib import Path

from ..errors import InputError
from ..numeric import Sieve
from .logentries import Entry, LogData, _number, _plain_cell, _short

#: cells of one CSV log kept without a filter (past it only column statistics are kept)
MAX_KEPT_CELLS = 200_000
_ROW_AT = re.compile(r"^row (\d+)[ ,]")
CSV_SUFFIXES = (".csv", ".tsv", ".tab")


def _delimiter(path: Path, first: str) -> str:
    if path.suffix.lower() in (".tsv", ".tab"):
        return "\t"
    counts = {d: first.count(d) for d in (",", "\t", ";", "|")}
    return max(counts, key=lambda d: counts[d]) if any(counts.values()) else ","


def _float(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def _is_number(cell: str) -> bool:
    return _float(cell) is not None


def _cell(cell: str) -> tuple[str, str, int] | None:
    """Return (number, unit, scale) of a CSV cell holding one number (`0.91`, `91.4%`, `1,234`, `27.2B`), else None
    (also for `nan` and `inf`: a missing value is no entry)."""
    value = _float(cell)
    if value is not None:
        return (cell.strip(), "", 0) if math.isfinite(value) else None
    return _number(cell)


def _is_label(cell: str) -> bool:
    """Return whether a cell may name its row: words, or a size such as `7B` (never a number, `nan` or a percentage)."""
    found = _cell(cell) if cell.strip() and not _is_number(cell) else ("", "", 0)
    return found is None or bool(found[2])


def _numeric_columns(first: list[list[str]]) -> list[int]:
    """Return the columns whose first rows hold a number (the others hold labels, never values)."""
    width = max((len(row) for row in first), default=0)
    return [j for j in range(width) if any(j < len(row) and _cell(row[j]) is not None for row in first)]


def _positions(header: list[str]) -> bool:
    """Return whether a first row names the columns by position (`0,1,2`, pandas' `,0,1,2`) rather than holding data.

    Its cells are the consecutive integers from 0 or 1, after at most one empty cell (an index column's)."""
    cells = [c.strip() for c in header]
    if cells and not cells[0]:
        cells = cells[1:]
    if len(cells) < 2 or not all(c.isdigit() and (c == "0" or not c.startswith("0")) for c in cells):
        return False
    first = int(cells[0])
    return first in (0, 1) and [int(c) for c in cells] == list(range(first, first + len(cells)))


def _header(header: list[str]) -> tuple[list[str], set[int], bool]:
    """Return the column names a CSV's first row gives, the columns it names by a word, and whether it is data."""
    if header and not any(_is_number(c) for c in header):
        named = {i for i, c in enumerate(header) if c.strip()}
        return [c.strip() or str(i + 1) for i, c in enumerate(header)], named, False
    if _positions(header):
        return [c.strip() or "index" for c in header], set(), False
    return [str(i + 1) for i in range(len(header))], set(), True


def _row_label(row: list[str], names: list[str], named: set[int]) -> tuple[str, str]:
    """Return the words naming a CSV row (its first label cell) and how its locator shows them (`model=Ours`)."""
    for j, cell in enumerate(row):
        if cell.strip() and _is_label(cell):
            label = cell.strip()
            shown = " ".join(label.split())[:40]
            return label, f"{names[j]}={shown}" if j in named and j < len(names) else shown
    return "", ""


def csv_entries(path: Path, pieces: Iterable[str], sieve: Sieve | None = None, want: set[str] | None = None) -> LogData:
    """Return the entries of a CSV/TSV log read row by row: the cells `sieve` keeps (all, up to a cap, without one)
    and the locators `want` names, with every numeric column's mean.

    A cell's locator names its row, the row's label and its column: `row 3 (model=Ours), column acc`."""
    data = LogData(path)
    want = want or set()
    wanted = {int(m.group(1)) for locator in want if (m := _ROW_AT.match(locator))}
    # newline="": a quoted cell may hold a line break, and csv reads "\r\n" itself
    handle = chain.from_iterable(io.StringIO(piece, newline="") for piece in pieces)
    try:
        first_line = next(handle, "")
        delimiter = _delimiter(path, first_line)
        header = next(csv.reader(io.StringIO(first_line), delimiter=delimiter), [])
        rest = csv.reader(handle, delimiter=delimiter)
        names, named, is_data = _header(header)
        rows = iter(_chain([header], rest) if is_data else rest)
        first = list(islice(rows, 50))
        numeric = _numeric_columns(first)
        while len(names) < max(numeric, default=-1) + 1:
            names.append(str(len(names) + 1))
        kept, sums, counts, last_row = _cells(_chain(first, rows), numeric, names, named, sieve, want, wanted, data)
    except csv.Error as exc:
        raise InputError(path, f"cannot be parsed as CSV ({exc})") from None
    for r, j, found, label, shown in kept:
        words = f"{label} final last" if r == last_row and last_row > 1 else label
        at = f"row {r} ({shown}), column {names[j]}" if shown else _plain_cell(f"row {r}", names[j])
        data.entries.append(Entry(path, at, found[0], f"row {r}", names[j], words, counts[j], "cell", found[1],
                                  found[2]))  # fmt: skip
    for j, name in enumerate(names):
        if counts[j] >= 2:
            mean = sums[j] / counts[j]
            data.means.append(Entry(path, f"mean(column {name})", _short(mean), "", name, "mean average",
                                    counts[j], "mean"))  # fmt: skip
    return data


_Kept = tuple[int, int, tuple[str, str, int], str, str]


def _cells(
    rows: Iterable[list[str]], numeric: list[int], names: list[str], named: set[int], sieve: Sieve | None,
    want: set[str], wanted: set[int], data: LogData,
) -> tuple[list[_Kept], list[float], list[int], int]:  # fmt: skip
    """Return the kept cells (row, column, number, label, label as shown), the columns' sums and counts of plain
    values, and the last row's number."""
    sums = [0.0] * len(names)
    counts = [0] * len(names)
    kept: list[_Kept] = []
    last_row = 0
    fits = sieve.fits if sieve is not None else None
    width = max(numeric, default=-1) + 1
    for r, row in enumerate(rows, start=1):
        last_row = r
        label: tuple[str, str] | None = None
        asked = r in wanted
        for j in numeric if len(row) >= width else [j for j in numeric if j < len(row)]:
            cell = row[j]
            scale = 0
            try:  # the common cell is a plain number: one float() and no tuple (a million rows)
                v = float(cell)
            except ValueError:
                found = _number(cell)  # a numeric string: `91.4%`, `1,234`, `27.2B`
                if found is None:
                    continue
                v, scale = float(found[0]), found[2]
            else:
                if v - v != 0:  # nan or inf: a missing value
                    continue
                found = None
            if not scale:  # a mean of `7B` and `500M` as written is no number of either
                sums[j] += v
                counts[j] += 1
            if fits is None:
                keep = len(kept) < MAX_KEPT_CELLS
            else:
                keep = fits(v) or (scale != 0 and fits(v * 10.0**scale))
            if keep or asked:
                label = label or _row_label(row, names, named)
                if not keep:
                    plain = _plain_cell(f"row {r}", names[j])
                    keep = plain in want or f"row {r} ({label[1]}), column {names[j]}" in want
            if keep:
                kept.append((r, j, found or (cell.strip(), "", 0), *(label or ("", ""))))
            else:
                data.dropped += 1
    return kept, sums, counts, last_row


def _chain(first: list[list[str]], rest: Iterable[list[str]]) -> Iterable[list[str]]:
    yield from first
    yield from rest
