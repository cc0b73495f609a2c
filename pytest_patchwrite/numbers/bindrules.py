"""What counts as evidence that a printed number reports a log entry, and what speaks against it.

An equal value is no evidence: many logged values round to any printed number. Evidence is the
number's context naming the entry: its field (the key's last part, the CSV column, the word before
a number on a text line) and its row (the record's path and label, the CSV row's label, the file
name). Counter-evidence removes a candidate whatever else it has: an identifier, index, step, epoch,
seed or layer field (by name, or a column of increasing integers); a model size or configuration
the context names that the entry's path contradicts (`32B` against `results_7b.json`); a row label
or column header that names another row or field of the same log table better; a setting (the
number's own words name a hyperparameter: `KL coefficient 0.01`, a numeric first column) bound to
an entry whose name does not name that setting. docs/evidence.md states the rules.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Iterable
from pathlib import PurePath

from ..tex.texcontext import Context
from ..tex.texwords import CONFIG
from .binder import Bound, Occurrence, col_key, name_words, similar
from .logentries import Entry, LogData

#: a word of the context names a word of the entry at least this strongly (similarity x weight)
NAMES = 0.3
#: words too common in log names to tell entries apart: they add to a name, never make one alone
GENERIC = frozenset(
    """test val valid validation train training eval evaluation score scores value values metric metrics result
    results mean avg average final all total overall model models run runs data summary stats best last main exp
    experiment experiments log logs output outputs default dev split set number num count rate ratio""".split()
)
#: the last word of a field that identifies a row rather than measuring it
#: (`seeds`, `epochs`, `steps` count them: `over 3 seeds` reports `"seeds": 3`)
IDENTIFIERS = frozenset("id ids idx index step epoch seed layer iter iteration fold".split())
#: words that name a setting of an experiment rather than a result
SETTINGS = frozenset(
    """coefficient coef coeff lr decay temperature temp threshold dropout warmup batch momentum beta alpha lambda
    gamma epsilon eps tau bandwidth budget penalty margin clip clipping horizon window kl learning rate schedule
    weight weighting regularization smoothing cutoff""".split()
)
#: words that say a number summarizes a column (a row of it is then not what the text reports)
_AVERAGED = frozenset("mean average averages averaged avg median std deviation total sum".split())
_ROW_PARTS = re.compile(r"\[\d+\]|\[\*\]|\"")


def field_words(entry: Entry) -> list[str]:
    """Return the words of an entry's field: its key's last part, its CSV column, the word before it on a line."""
    if entry.kind == "line":
        return name_words(entry.column)
    return name_words(col_key(entry))


def row_words(entry: Entry, with_file: bool = True) -> list[str]:
    """Return the words of an entry's row: the key path above its field, the record's label, the file's name."""
    return list(_row_words(entry, with_file))


@functools.lru_cache(maxsize=1 << 18)  # asked once per (number, fitting entry): read once per entry (`forget`)
def _row_words(entry: Entry, with_file: bool) -> tuple[str, ...]:
    words: list[str] = []
    if entry.kind == "leaf":
        parts = re.split(r"[.\[]", _ROW_PARTS.sub(" ", entry.at))[:-1]
        for part in parts:
            words.extend(name_words(part))
    words.extend(name_words(entry.label.replace(" ", "_")))
    if with_file:
        words.extend(name_words(PurePath(entry.log).stem))
    own = field_words(entry)
    return tuple(dict.fromkeys(w for w in words if w not in own))


def naming(words: dict[str, float], names: Iterable[str], generic: float = 0.5) -> float:
    """Return how strongly context `words` (word -> weight) name any of `names` (0 when none); a generic name word
    counts `generic` times as much."""
    best = 0.0
    for name in names:
        factor = generic if name in GENERIC else 1.0
        for word, weight in words.items():
            s = similar(word, name)
            if s:
                best = max(best, s * weight * factor)
    return round(best, 4)


#: how many of a prose number's words right before it may name another record than its entry's
BEFORE = 2
#: a prose number's words are weighed against the other records of its entry's field up to this many records
PROSE_ROWS = 64
#: unit words of field names (`duration_hours`): naming one names a unit, not the quantity
UNITS = frozenset("hours hour minutes minute seconds second sec ms days day bytes mb gb percent pct".split())
#: how strongly a number's own words name an entry's field when they name it outright (`AUROC` of `auroc`)
OWN = 0.8


def prints_identifier(occ: Occurrence, entry: Entry) -> bool:
    """Return whether a number is the identifier itself, named by its own words (`we use seed 20231015` and a
    one-valued `"seed": 20231015`): a setting of the run, not a measured number bound to an index."""
    words = field_words(entry)
    return entry.rows == 1 and bool(words) and naming(dict.fromkeys(occ.context.near, 1.0), words[-1:]) >= 0.9


def is_identifier(entry: Entry, monotone: set[tuple[str, str]]) -> bool:
    """Return whether an entry identifies a row (`key_id`, `by_layer[31].layer`, `step`) instead of measuring it."""
    words = field_words(entry)
    if words and words[-1] in IDENTIFIERS:
        return True
    return (str(entry.log), entry.column) in monotone


def monotone_columns(datas: Iterable[LogData]) -> set[tuple[str, str]]:
    """Return the (log, column) of columns whose values, all held, are increasing integers (a step, a row number)."""
    out = set()
    for data in datas:
        columns: dict[str, list[Entry]] = {}
        for e in data.entries:
            if e.kind in ("cell", "leaf") and e.rows >= 3:
                columns.setdefault(e.column, []).append(e)
        for column, entries in columns.items():
            if len(entries) != entries[0].rows or data.dropped and entries[0].kind == "cell":
                continue
            try:
                values = [int(e.raw) for e in entries]
            except ValueError:
                continue
            if all(b > a for a, b in zip(values, values[1:], strict=False)):
                out.add((str(data.path), column))
    return out


@functools.lru_cache(maxsize=1 << 18)  # asked once per (number, fitting entry): read once per entry (`forget`)
def entry_configs(entry: Entry, paper: PurePath | None = None) -> frozenset[str]:
    """Return the model sizes an entry's place names: its file's name, its folders below the one it shares with the
    paper's file `paper` (never the folders above the paper: a checkout under `/tmp/q-a7b1/` names no 7B model), key
    path, row label."""
    path = PurePath(entry.log)
    folders = path.parts[-3:-1]
    if paper is not None:
        shared = 0
        for a, b in zip(path.parts[:-1], PurePath(paper).parts[:-1], strict=False):
            if a != b:
                break
            shared += 1
        folders = path.parts[max(shared, len(path.parts) - 3) : -1]
    text = " ".join([*folders, path.stem, entry.at, entry.label])
    return frozenset(f"{m.group(1)}{m.group(2).lower()}" for m in CONFIG.finditer(text))


def setting_words(context: Context) -> set[str]:
    """Return the setting words among a number's own words (`KL coefficient 0.01`: kl, coefficient)."""
    return {w for w in context.near if w in SETTINGS}


def counter_evidence(occ: Occurrence, entry: Entry, monotone: set[tuple[str, str]]) -> str | None:
    """Return why an entry cannot be what a number reports (identifier, config, setting), None when nothing speaks
    against it."""
    if is_identifier(entry, monotone) and not prints_identifier(occ, entry):
        return "identifier"
    mine, theirs = occ.context.configs, entry_configs(entry, occ.file)
    if mine and theirs and not mine & theirs:
        return "configuration"
    if (
        entry.rows > 1
        and _AVERAGED & set(occ.context.near)
        and not _AVERAGED & set(field_words(entry) + row_words(entry))
    ):
        return "aggregate"  # the text reports a mean or median of the column, not one of its rows
    settings = setting_words(occ.context)
    if (
        settings
        and not _names_setting(frozenset(settings), tuple(field_words(entry) + row_words(entry)))
        and naming(dict.fromkeys(occ.context.near, 1.0), [w for w in field_words(entry) if w not in UNITS]) < OWN
    ):
        return "setting"  # (`KL coefficient of 0.01` is no pct_under_0_80; `AUROC (no KL)` is an auroc)
    return None


@functools.lru_cache(maxsize=1 << 16)  # asked once per (number, fitting entry): the same words repeat
def _names_setting(settings: frozenset[str], names: tuple[str, ...]) -> float:
    return naming(dict.fromkeys(settings, 1.0), names, 1.0)


class Tables:
    """The log tables by (log, column): which rows hold a field, for telling the right row from a neighbour."""

    def __init__(self, datas: Iterable[LogData]) -> None:
        self.by_column: dict[tuple[str, str], list[Entry]] = {}
        self.by_row: dict[tuple[str, str], list[Entry]] = {}
        self.lines: dict[tuple[str, str], list[Entry]] = {}  # a text log's numbers by the word before them
        self.fields: dict[tuple[str, str], list[Entry]] = {}  # entries by their field's name, across records
        self.dropped: dict[str, int] = {}  # values a log's filter did not keep
        self._words: dict[str, int] | None = None  # field name word -> how many distinct field names hold it
        for data in datas:
            self.dropped[str(data.path)] = data.dropped
            for e in data.entries:
                if e.kind == "line":
                    self.lines.setdefault((str(e.log), e.column), []).append(e)
                elif e.kind in ("cell", "leaf"):
                    self.fields.setdefault((str(e.log), col_key(e)), []).append(e)
                    self.by_column.setdefault((str(e.log), e.column), []).append(e)
                    self.by_row.setdefault((str(e.log), e.row), []).append(e)

    def wrong_place(self, occ: Occurrence, entry: Entry) -> str | None:
        """Return `row` or `field` when a table cell's row label (column header) names another row (field) of the
        entry's log table better than the entry's own, None otherwise."""
        log = str(entry.log)
        key = col_key(entry) if entry.kind == "leaf" else entry.column  # `a.score` and `b.score`: one field
        if occ.context.cell is None:
            return self._prose_row(occ, entry, (log, key))
        near = frozenset(occ.context.near)
        if not near:
            return None
        rows, top = self._covered(near, ("row", log, key), entry.kind)
        if _other(top, entry.row) >= max(0.5, rows.get(entry.row, 0.0) + 0.25):
            return "row"
        fields, top = self._covered(near, ("field", log, entry.row), entry.kind)
        if _other(top, entry.column) >= max(0.5, fields.get(entry.column, 0.0) + 0.25):
            return "field"
        return None

    def names_alone(self, near: Iterable[str], entry: Entry) -> bool:
        """Return whether a number's own words name a specific word of the entry's field that no other field name of
        the logs holds (`CS faculty ... 0.55` and `main.faculty`): a name only that field answers to."""
        if self._words is None:
            names = {name.lower() for _, name in self.fields}  # a key's last part, a CSV column
            counts: dict[str, int] = {}
            for name in names:
                for w in set(name_words(name)):
                    counts[w] = counts.get(w, 0) + 1
            self._words = counts
        words = list(near)
        return any(
            w not in GENERIC and len(w) >= 3 and self._words.get(w, 0) == 1
            and max((similar(n, w) for n in words), default=0.0) >= 0.9
            for w in field_words(entry)
        )  # fmt: skip

    def _prose_row(self, occ: Occurrence, entry: Entry, where: tuple[str, str]) -> str | None:
        """Return `row` when a prose number's last words before it name another record of the entry's field and none
        of its own words the entry's (`compared with the baseline 86.9` is no `ours.occluded_acc`), by the words that
        tell the two records apart. The words after it may be its neighbour's (`91.4 compared with the baseline 68.2`)
        and those before it the previous number's (`91.4 for ours and 68.2 for the baseline`)."""
        before = dict.fromkeys(occ.context.before[-BEFORE:], 1.0)  # `the baseline 86.9`, `baseline reaches 86.9`
        near = dict.fromkeys(occ.context.near, 1.0)
        if not before:
            return None
        table = self.fields.get(where, ()) if entry.kind == "leaf" else self.by_column.get(where, ())
        if not 2 <= len(table) <= PROSE_ROWS:
            return None
        mine = set(row_words(entry, False))
        for other in table:
            if other.row == entry.row:
                continue
            theirs = set(row_words(other, False))
            if naming(before, theirs - mine, 0.0) >= 0.9 and not naming(near, mine - theirs, 0.0):
                return "row"
        return None

    def _covered(
        self, near: frozenset[str], where: tuple[str, str, str], kind: str
    ) -> tuple[dict[str, float], list[tuple[float, str]]]:
        """Return, for each row (field) of a log table, how much of its name `near` covers, and the two best covered
        (memoized: a table of thousands of rows is not scanned again for every entry of it)."""
        memo = self.__dict__.setdefault("_memo", {})
        found = memo.get((near, where))
        if found is None:
            covered = {name: _coverage(near, words) for name, words in self._names(where, kind).items()}
            found = memo[(near, where)] = (covered, heapq.nlargest(2, ((c, name) for name, c in covered.items())))
        return found

    def _names(self, where: tuple[str, str, str], kind: str) -> dict[str, tuple[str, ...]]:
        """Return the names of each row (field) of a log table (memoized: they do not depend on the number)."""
        memo = self.__dict__.setdefault("_names_memo", {})
        names = memo.get((where, kind))
        if names is None:
            what, log, key = where
            if what == "row":
                table = self.fields if kind == "leaf" else self.by_column
                names = {e.row: tuple(row_words(e, False)) for e in table.get((log, key), ())}
            else:
                names = {e.column: tuple(field_words(e)) for e in self.by_row.get((log, key), ())}
            memo[(where, kind)] = names
        return names


def coverage(near: frozenset[str] | set[str], names: list[str]) -> float:
    """Return the share of a name's specific words that `near` names (`late heavy` of `middle-heavy`: 0.5)."""
    specific = [n for n in names if n not in GENERIC] or names
    if not specific:
        return 0.0
    return sum(max((similar(w, n) for w in near), default=0.0) for n in specific) / len(specific)


def _other(top: list[tuple[float, str]], own: str) -> float:
    """Return the best coverage of a row (field) other than `own`, from the two best (-1 when there is none)."""
    return next((c for c, name in top if name != own), -1.0)


@functools.lru_cache(maxsize=1 << 16)  # the rows of one log's table have the same names under every field
def _coverage(near: frozenset[str], names: tuple[str, ...]) -> float:
    return coverage(near, list(names))


def forget() -> None:
    """Empty the memos of entries' words (a bind's entries are not kept past it)."""
    for memo in (_row_words, entry_configs, _names_setting, _coverage):
        memo.cache_clear()


def spells_field(near: Iterable[str], entry: Entry) -> bool:
    """Return whether a number's own words spell out every specific word of an entry's field, and it has two or more
    (`Old-fact accuracy` and `old_fact_accuracy`; not `accuracy` alone, nor `success rate`, `rate` being generic)."""
    specific = list(dict.fromkeys(w for w in field_words(entry) if w not in GENERIC))
    words = list(near)
    return len(specific) >= 2 and all(max((similar(w, n) for w in words), default=0.0) >= 0.8 for n in specific)


def per_seed(entry: Entry) -> bool:
    """Return whether an entry is one seed's (or run's) row, not a summary."""
    text = " ".join([PurePath(entry.log).stem, entry.at, entry.label]).lower()
    return bool(re.search(r"seed|\brun[_\s-]?\d|fold[_\s-]?\d", text))


def names_seed(context: Context) -> bool:
    """Return whether a number's context names a seed or run (then a per-seed row may win over the summary)."""
    return any(w.startswith("seed") or w in ("run", "fold") for w in context.near)


def drop_repeated_values(occs: list[Occurrence], decided: dict[int, Bound]) -> None:
    """Unbind every value-only binding of an entry that two or more numbers of one sentence or table claim on their
    value alone (in place): the chance bound is per number, and one entry fitting several numbers that nothing names
    (`Values: 0.417 ... 0.417 ...`) is itself the sign of coincidence."""
    claims: dict[tuple[str, str, str], list[int]] = {}
    for i, bound in decided.items():
        if bound.best.evidence == "value":
            claims.setdefault((occs[i].context.group, str(bound.best.entry.log), bound.best.entry.at), []).append(i)
    for members in claims.values():
        if len(members) > 1:
            for i in members:
                del decided[i]
