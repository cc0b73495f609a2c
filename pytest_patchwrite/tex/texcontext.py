"""Where a printed number stands: its sentence, or its table cell (row label, column headers, caption), and the
anchor words that identify the occurrence when lines move.

Part of the LaTeX layer: it reads the masked text `texmask.mask` gives and the numbers `latex.scan`
found, and adds the layout the binder ranks log entries by.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .latex import Number
from .texmask import command_args, mask
from .texwords import WINDOW, Sentence, configs_of, words_of

TABULARS = ("tabular", "tabular*", "tabularx", "tabulary", "longtable", "tblr")
_TABULAR_ARGS = {"tabular": 1, "tabular*": 2, "tabularx": 2, "tabulary": 2, "longtable": 1, "tblr": 1}
_BEGIN_TABULAR = re.compile(r"\\begin\{(" + "|".join(re.escape(t) for t in TABULARS) + r")\}")
_FLOATS = re.compile(r"\\(begin|end)\{(table\*?|figure\*?|wraptable|sidewaystable)\}")
_TOKEN = re.compile(r"\\[A-Za-z@]+|\\\\|&|[^\W\d_][^\W_]*|\d[\d.,]*")
_DECIMAL = re.compile(r"\d[\d,]*\.\d")
_CELL_NUMBER = re.compile(r"\d")
_NUMERIC_CELL = re.compile(r"\d[\d.,]*")
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z\\$(])|\n[ \t]*\n|\\(?:section|subsection|subsubsection|paragraph|"
                       r"caption|item|begin|end)\b")  # fmt: skip
_PERCENT = re.compile(r"\\%|\bpercent|percentage|\\percent")
# a header's or caption's unit: `(M)`, `(ms)`; bytes `(MB)`, `(MB per sequence)`
_SCALE = re.compile(r"[(\[]\s*(?:\\#\s*)?(?:(?P<unit>M|K|k|B|G|ms|s|sec|millions?|thousands?|billions?)\s*|"
                    r"(?P<bytes>[kKMGT]B)\b[^()\[\]{}]{0,40})[)\]]")  # fmt: skip
_SUFFIX = re.compile(r"\s*(?:~|\\,|\\ |\\;)?\s*(?P<unit>[kKMGT]B|ms|s|sec|M|K|B|million|thousand|billion)(?![A-Za-z])")
_UNITS = {"M": ("scale:1e-6",), "million": ("scale:1e-6",), "millions": ("scale:1e-6",),
          "K": ("scale:1e-3",), "k": ("scale:1e-3",), "thousand": ("scale:1e-3",), "thousands": ("scale:1e-3",),
          "B": ("scale:1e-9",), "G": ("scale:1e-9",), "billion": ("scale:1e-9",), "billions": ("scale:1e-9",),
          "ms": ("scale:1e3",), "s": ("scale:1e-3",), "sec": ("scale:1e-3",),
          # bytes: a decimal prefix over a log's bytes (`80 MB` of 80000000 bytes)
          "kB": ("scale:1e-3",), "KB": ("scale:1e-3",), "MB": ("scale:1e-6",), "GB": ("scale:1e-9",),
          "TB": ("scale:1e-12",)}  # fmt: skip
NEAR = 4  # own words each side of a prose number
Sizes = frozenset[str]


@dataclass
class Table:
    """One tabular: its cells by (row, column), headers per column, row labels and the caption of its float."""

    start: int
    end: int
    caption: str = ""
    cells: list[tuple[int, int, int, int, str]] = field(default_factory=list)  # start, end, row, column, text
    name: str = ""  # the float's \label, else its caption's words: what identifies the table in a bindings file
    headers: dict[int, str] = field(default_factory=dict)
    labels: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """What stands around one printed number, for ranking log entries and choosing transforms."""

    words: dict[str, float]  # word -> weight
    percent: bool  # the printed form, its column header or its caption says percent
    scales: tuple[str, ...]  # unit scales its suffix or header suggests
    group: str  # sentence or table id: numbers of one group may derive from each other
    cell: tuple[int, int, int] | None = None  # (table, row, column) for a table cell
    # evidence the binder weighs: the words that are this number's own (prose: those between it and the
    # numbers beside it, a few each side; a cell: its row label and column header), the model sizes or
    # configurations the context names (`7b`, `32b`), and whether the cell is a setting axis (a numeric
    # first column)
    near: tuple[str, ...] = ()
    configs: frozenset[str] = frozenset()
    axis: bool = False
    #: what identifies the occurrence in a bindings file, never its neighbouring numbers: a cell's
    #: (table, row, column), a prose number's (sentence, before, after) words
    identity: tuple[tuple[str, str], ...] = ()
    #: a prose number's own words before it (up to the number before): the row it names (`the baseline 86.9`)
    before: tuple[str, ...] = ()


class Layout:
    """The tables, sentences and anchor tokens of one source file."""

    def __init__(self, text: str) -> None:
        self.masked = mask(text)[0]
        self.tables = _tables(self.masked)
        self._table_starts = [t.start for t in self.tables]
        self._bounds = [0] + [m.start() for m in _BOUNDARY.finditer(self.masked)] + [len(self.masked)]
        # a decimal, which may be a result that changes, is `#`; an integer (a row's step, a year) and a
        # name with digits (cap101, Qwen2) stay as written, so rows of one table anchor apart
        self._tokens = [(m.start(), m.end(), "#" if _DECIMAL.match(m.group(0)) else m.group(0)[:24])
                        for m in _TOKEN.finditer(self.masked)]  # fmt: skip
        self._token_starts = [t[0] for t in self._tokens]
        self._row_names: dict[tuple[int, int], str] = {}
        self._sentences: dict[int, Sentence] = {}
        self._cell_starts = [[c[0] for c in t.cells] for t in self.tables]
        self._rows: dict[tuple[int, int], list[tuple[int, int, int, int, str]]] = {}

    def anchor(self, number: Number, size: int = 4) -> tuple[str, str]:
        """Return the few tokens before and after a number (numbers as `#`): they identify the occurrence."""
        i = bisect.bisect_left(self._token_starts, number.start)
        j = bisect.bisect_left(self._token_starts, number.end)
        before = [t[2] for t in self._tokens[max(0, i - size) : i]]
        after = [t[2] for t in self._tokens[j : j + size]]
        return " ".join(before), " ".join(after)

    def cell_of(self, pos: int) -> tuple[int, Table, tuple[int, int, int, int, str]] | None:
        """Return (table index, table, cell) holding offset `pos`, or None in prose."""
        k = bisect.bisect_right(self._table_starts, pos) - 1
        if k < 0 or not self.tables[k].start <= pos < self.tables[k].end:
            return None
        table = self.tables[k]
        i = bisect.bisect_right(self._cell_starts[k], pos) - 1
        if i >= 0 and pos < table.cells[i][1]:
            return k, table, table.cells[i]
        return None

    def _row(self, k: int, row: int) -> list[tuple[int, int, int, int, str]]:
        """Return the cells of one table row (memoized: a table's rows are read once, not once per number)."""
        if (k, row) not in self._rows:
            for cell in self.tables[k].cells:
                self._rows.setdefault((k, cell[2]), []).append(cell)
        return self._rows.get((k, row), [])

    def context(self, number: Number) -> Context:
        """Return the context of one number: its cell's labels, headers and caption, else its sentence."""
        found = self.cell_of(number.start)
        if found is not None:
            k, table, (_, _, row, column, _) = found
            cells = self._row(k, row)
            first = next((c[4] for c in cells if c[3] == 0), "")
            axis_row = bool(_CELL_NUMBER.search(first)) and not words_of(re.sub(r"\\[A-Za-z@]+", " ", first))
            label = "" if axis_row else table.labels.get(row, "")  # a row led by a number (a setting) has no label
            words: dict[str, float] = {}
            others = " ".join(
                c[4] for c in cells if c[3] != column and not _NUMERIC_CELL.search(c[4])
            )  # the row's other words (a claim, a setting) name it too, less than its label
            for text, weight in ((table.caption, 0.5), (others, 0.5), (table.headers.get(column, ""), 1.0),
                                 (label, 1.0)):  # fmt: skip
                for w in words_of(text):
                    words[w] = max(words.get(w, 0.0), weight)
            header = table.headers.get(column, "")
            percent = number.percent or bool(_PERCENT.search(header)) or bool(_PERCENT.search(table.caption))
            scales = _scales(header) or _byte_scales(table.caption)
            if re.search(r"[(\[]\s*\\?%\s*[)\]]", header):
                percent = True
            near = tuple(dict.fromkeys(words_of(header) + words_of(label)))
            configs = configs_of(label) or configs_of(header) or configs_of(table.caption) or configs_of(others)
            axis = axis_row and column == 0
            if (k, row) not in self._row_names:
                self._row_names[k, row] = _row_name(table, row)
            # a table, row or column with no name is named by its place (`#2`: the second tabular of the file)
            identity = (("table", table.name or f"#{k + 1}"), ("row", self._row_names[k, row] or f"#{row + 1}"),
                        ("column", plain(header) or f"#{column + 1}"))  # fmt: skip
            return Context(words, percent, scales, f"table{k}", (k, row, column), near, configs, axis, identity)
        return self._prose(number)

    def _sentence(self, number: Number) -> Sentence:
        """Return the sentence holding a number, read once for all its numbers (its words, numbers and sizes)."""
        s = bisect.bisect_right(self._bounds, number.start) - 1
        if s not in self._sentences:
            start, end = self._bounds[s], self._bounds[min(s + 1, len(self._bounds) - 1)]
            self._sentences[s] = Sentence(self.masked, s, start, end)
        return self._sentences[s]

    def _prose(self, number: Number) -> Context:
        """Return a prose number's context: the words of its sentence within `WINDOW` characters of it, nearer
        words weighing more, its own words, the sizes its sentence names and its identity."""
        sentence = self._sentence(number)
        low, high = max(sentence.start, number.start - WINDOW), min(sentence.end, number.end + WINDOW)
        weights = {word: 1.0 / (1.0 + between / 4.0) for word, between in sentence.nearest(low, high, number.start)}
        suffix = _SUFFIX.match(self.masked, number.end)
        scales = _UNITS.get(suffix.group("unit"), ()) if suffix else ()
        before, after, configs = self._own(number, sentence, low, high)
        return Context(weights, number.percent, scales, f"sentence{sentence.index}", None,
                       tuple(dict.fromkeys(before + after)), configs,
                       identity=self._identity(number, sentence, low, high), before=tuple(before))  # fmt: skip

    def _identity(self, number: Number, sentence: Sentence, low: int, high: int) -> tuple[tuple[str, str], ...]:
        """Return a prose number's identity: its sentence's words and the words on either side of it."""
        start, end = sentence.start, sentence.end
        opening = _OPENING.match(self.masked, start)  # `\\end{table}` opens the sentence after a float
        start = opening.end() if opening and opening.end() <= number.start else start
        before = sentence.all_words(max(start, low), number.start)[-ANCHOR_WORDS:]
        after = sentence.all_words(min(number.end, end), high)[:ANCHOR_WORDS]
        return (("sentence", sentence.opening(start) or f"#{sentence.index}"),
                ("before", " ".join(before[-ANCHOR_WORDS:])), ("after", " ".join(after[:ANCHOR_WORDS])))  # fmt: skip

    def _own(self, number: Number, sentence: Sentence, low: int, high: int) -> tuple[list[str], list[str], Sizes]:
        """Return a prose number's own words before and after it (up to the numbers beside it) and the sizes its
        sentence names."""
        left, right = sentence.beside(number.start, number.end)
        left, right = max(left, low), min(right, high)
        before = words_of(self.masked[left : number.start])[-NEAR:]
        after = words_of(self.masked[number.end : right])[:NEAR]
        near_configs = configs_of(self.masked[left:right], (number.start - left, number.end - left))
        return before, after, near_configs or sentence.only_config(number.start, number.end)


def _scales(text: str) -> tuple[str, ...]:
    """Return the scales a column header's units name (`Params (M)`: 1e-6, `Cache (MB)`: 1e-6 of bytes)."""
    return tuple(s for m in _SCALE.finditer(text) for s in _UNITS.get(m.group("unit") or m.group("bytes"), ()))


def _byte_scales(caption: str) -> tuple[str, ...]:
    """Return the byte scale a caption names for its cells (`decode cache (MB per sequence)`), none for others."""
    return tuple(s for m in _SCALE.finditer(caption) if m.group("bytes") for s in _UNITS.get(m.group("bytes"), ()))


def _tables(masked: str) -> list[Table]:
    floats = [(m.start(), m.group(1), m.group(2)) for m in _FLOATS.finditer(masked)]
    tables = []
    for m in _BEGIN_TABULAR.finditer(masked):
        env = m.group(1)
        args = [a for a in command_args(masked, m.end(), limit=_TABULAR_ARGS.get(env, 1) + 1)]
        mandatory = [a for a in args if a[0] == "{"][: _TABULAR_ARGS.get(env, 1)]
        body = (mandatory[-1][2] + 1) if mandatory else m.end()
        close = masked.find(f"\\end{{{env}}}", body)
        close = len(masked) if close == -1 else close
        table = Table(body, close)
        _cells(masked, table)
        table.caption, label = _caption(masked, floats, m.start())
        table.name = label or " ".join(words_of(table.caption)[:TABLE_WORDS])
        tables.append(table)
    return tables


def _caption(masked: str, floats: list[tuple[int, str, str]], at: int) -> tuple[str, str]:
    """Return the caption and the `\\label` of the float holding offset `at` ("" for either it lacks)."""
    begin = end = None
    for pos, kind, _ in floats:
        if pos <= at and kind == "begin":
            begin = pos
        if pos > at and kind == "end":
            end = pos
            break
    if begin is None or end is None:
        return "", ""
    label = ""
    found = masked.find("\\label", begin, end)
    if found != -1:
        args = [a for a in command_args(masked, found + len("\\label"), limit=1) if a[0] == "{"]
        label = " ".join(masked[args[0][1] : args[0][2]].split()) if args else ""
    found = masked.find("\\caption", begin, end)
    if found == -1:
        return "", label
    args = [a for a in command_args(masked, found + len("\\caption"), limit=1) if a[0] == "{"]
    return (masked[args[0][1] : args[0][2]] if args else ""), label


#: how many words beside a number and of a caption an identity keeps
ANCHOR_WORDS, TABLE_WORDS = 4, 10
_RULE_ARGS = re.compile(r"\\(?:multirow|multicolumn)\*?\s*\{[^{}]*\}\s*(?:\[[^\]]*\]\s*)?\{[^{}]*\}|"
                        r"\\(?:cmidrule|cline|rowcolor|cellcolor|color|vspace|hspace|addlinespace)\*?\s*"
                        r"(?:\([^)]*\))?\s*(?:\[[^\]]*\])?\s*(?:\{[^{}]*\})?")  # fmt: skip
_COMMAND = re.compile(r"\\[A-Za-z@]+\*?|\\(?=[^A-Za-z@])")


def plain(text: str, size: int = 80) -> str:
    """Return a cell's or header's text as its identity: commands, rules and braces dropped, blanks collapsed."""
    text = _COMMAND.sub(" ", _RULE_ARGS.sub(" ", text))
    return " ".join(re.sub(r"[{}$~^]", " ", text).split())[:size]


_OPENING = re.compile(r"\s*\\(?:begin|end)\s*\{[^{}]*\}")
_STANDALONE_DECIMAL = re.compile(r"(?<![\w.-])\d+\.\d+")


def _value_cell(text: str) -> bool:
    """Return whether a cell prints a value (`91.4`, `91.4 $\\pm$ 0.3`), not a name (`7B`, `GPT-3.5`, `w/o aug`)."""
    shown = plain(text)
    return bool(_CELL_NUMBER.search(shown)) and (not re.search(r"[^\W\d_]", shown)
                                                  or bool(_STANDALONE_DECIMAL.search(shown)))  # fmt: skip


def _row_name(table: Table, row: int) -> str:
    """Return what names a table row: its first cell (the one above under `\\multirow` when empty), then the words of
    its other cells that hold no number; never the numbers it prints."""
    cells = sorted((c for c in table.cells if c[2] == row), key=lambda c: c[3])
    first = ""
    if cells and not _value_cell(cells[0][4]):
        first = plain(cells[0][4])
        r = row
        while not first and r > 0 and any(c[2] == r - 1 for c in table.cells):
            r -= 1
            above = [c for c in table.cells if c[2] == r and c[3] == 0]
            if not above or _value_cell(above[0][4]):
                break
            first = plain(above[0][4])
    others = [plain(c[4]) for c in cells[1:] if not _value_cell(c[4])]
    return " | ".join([first, *(o for o in others if o)]) if any(others) else first


def _cells(masked: str, table: Table) -> None:
    rows: list[list[tuple[int, int]]] = [[]]
    depth, i, cell_start = 0, table.start, table.start
    while i < table.end:
        ch = masked[i]
        if ch == "\\":
            if masked.startswith("\\\\", i) and depth == 0:
                rows[-1].append((cell_start, i))
                rows.append([])
                i += 2
                opt = re.match(r"\s*\[[^\]]*\]", masked[i : i + 40])
                i += opt.end() if opt else 0
                cell_start = i
                continue
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif ch == "&" and depth == 0:
            rows[-1].append((cell_start, i))
            cell_start = i + 1
        i += 1
    rows[-1].append((cell_start, table.end))
    header_rows: list[int] = []
    seen_numeric = False
    label = ""
    for r, row in enumerate(rows):
        column = 0
        numeric_row = False
        for start, end in row:
            text = masked[start:end]
            span = 1
            multi = re.search(r"\\multicolumn\s*\{(\d+)\}", text)
            if multi:
                span = int(multi.group(1))
            table.cells.append((start, end, r, column, text))
            if column > 0 and _CELL_NUMBER.search(text) and not words_of(re.sub(r"\\[A-Za-z@]+", " ", text)):
                numeric_row = True
            column += span
        if not seen_numeric and not numeric_row:
            header_rows.append(r)
        seen_numeric = seen_numeric or numeric_row
        first = next((masked[s:e] for s, e in row if words_of(masked[s:e])), "")
        if first and numeric_row:
            label = first
        elif row and not words_of(masked[row[0][0] : row[0][1]]) and numeric_row:
            pass  # an empty first cell under \multirow keeps the label above
        else:
            label = first
        table.labels[r] = label
    for _, _, r, column, text in table.cells:
        if r in header_rows:
            multi = re.search(r"\\multicolumn\s*\{(\d+)\}", text)
            for c in range(column, column + (int(multi.group(1)) if multi else 1)):
                table.headers[c] = f"{table.headers.get(c, '')} {text}".strip()
