"""The bindings file `<root stem>.bindings.json`: the ledger of a manuscript's numbers, a reviewed decision for each.

Schema (version 2; `file` and `log` relative to the root's directory)::

    {"version": 2, "root": "main.tex", "bindings": [
      {"file": "sections/results.tex", "anchor": {"table": "tab:main", "row": "Ours", "column": "Clean"},
       "line": 3, "token": "91.4", "log": "results.json", "at": "ours.clean_acc", "value": "0.9142",
       "transform": "percent", "formula": null, "alternatives": []},
      {"file": "sections/setup.tex", "anchor": {"sentence": "learning rate", "before": "a learning rate of",
       "after": "for all runs"}, "line": 7, "token": "0.003", "log": null, "at": null, "value": "0.003",
       "transform": "manual", "formula": null, "alternatives": [], "reason": "setting"}]}

A decision is a log entry (`identity`, `percent`, `scale:1e<k>`), a `derived` formula over entries, or `manual`: a
number typed by hand, locked to its printed form (`value`), with the author's `reason`. The anchor identifies the
number's place, never by the numbers beside it: a table cell by its table (`\\label`, else caption), row label and
column header; a prose number by its sentence's words and the words on either side. `line` is a hint
(`bindmatch.match` pairs the file's decisions with the numbers as they stand).

Bindings are sorted by file and line (in reading order within a line) and written with a fixed key order, so a change
reads as a small diff. Only `patchwrite bind` and `pytest --patchwrite-bind` write it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files.inputs import load_json
from ..model import relative_name
from .bindmatch import CELL_KEYS, PROSE_KEYS

VERSION = 2
TRANSFORMS = ("identity", "percent", "derived", "manual")
MANUAL = "manual"
#: the reasons `--manual` suggests; any other text is the author's own
REASONS = ("setting", "cited", "not_logged")
_FIELDS = ("file", "anchor", "line", "token", "log", "at", "value", "transform", "formula", "alternatives")


@dataclass
class FileBinding:
    """One decision as the file holds it, with `file` and `log` resolved against the root's directory.

    `log` and `at` are None for a `manual` decision, whose `value` is the number as printed.
    """

    file: Path
    anchor: dict[str, str]
    line: int
    token: str
    log: Path | None
    at: str | None
    value: str
    transform: str
    formula: dict[str, Any] | None = None
    alternatives: list[dict[str, str]] = field(default_factory=list)
    reason: str | None = None

    @property
    def manual(self) -> bool:
        """Return whether the number was typed by hand (locked to its printed form)."""
        return self.transform == MANUAL


def default_path(root: Path, magic: dict[str, str]) -> Path:
    """Return where a manuscript's bindings live: `% !patchwrite bindings = FILE`, else `<root stem>.bindings.json`."""
    named = magic.get("patchwrite.bindings", "").strip()
    if named:
        return (root.parent / named).absolute()
    return root.with_name(root.stem + ".bindings.json").absolute()


def _formula_json(formula: dict[str, Any] | None, base: Path) -> dict[str, Any] | None:
    if formula is None:
        return None
    out: dict[str, Any] = {"op": formula["op"]}
    for key in ("power", "column"):  # `column`: the log column an aggregate runs over (`describe` names it)
        if key in formula:
            out[key] = formula[key]
    out["operands"] = [
        {"log": relative_name(Path(o["log"]), base), "at": o["at"], "transform": o["transform"],
         **({"places": o["places"]} if o.get("places") is not None else {})}
        for o in formula["operands"]
    ]  # fmt: skip
    return out


def distinct(alternatives: list[dict[str, str]]) -> list[dict[str, str]]:
    """Return alternatives with each entry (log, locator) once, the first transform kept."""
    seen: set[tuple[str, str]] = set()
    out = []
    for a in alternatives:
        key = (str(a.get("log")), str(a.get("at")))
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out


def row_json(b: FileBinding, base: Path) -> dict[str, Any]:
    """Return one decision as the file writes it (keys in a fixed order)."""
    row: dict[str, Any] = {
        "file": relative_name(b.file, base),
        "anchor": {k: b.anchor[k] for k in (*CELL_KEYS, *PROSE_KEYS) if k in b.anchor},
        "line": b.line,
        "token": b.token,
        "log": None if b.log is None else relative_name(b.log, base),
        "at": b.at,
        "value": b.value,
        "transform": b.transform,
        "formula": _formula_json(b.formula, base),
        "alternatives": [{**a, "log": relative_name(Path(a["log"]), base)} for a in distinct(b.alternatives)],
    }
    if b.manual:
        row["reason"] = b.reason or ""
    return row


def to_json(bindings: list[FileBinding], root: Path) -> dict[str, Any]:
    """Return the file's JSON object for `bindings` of the manuscript rooted at `root`, sorted."""
    rows = [row_json(b, root.parent) for b in bindings]
    rows.sort(key=lambda r: (r["file"], r["line"]))  # stable: numbers of one line stay in reading order
    return {"version": VERSION, "root": root.name, "bindings": rows}


def dumps(data: dict[str, Any]) -> str:
    """Return the file's text: two-space indent, one binding field per line, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


class OldBindings(InputError):
    """A bindings file of version 1, whose anchors are neighbouring numbers: `bind --update` rebinds it afresh."""

    def __init__(self, path: Path, text: str) -> None:
        super().__init__(path, "is a version 1 bindings file (its anchors name neighbouring numbers, which match the "
                         "row above); rewrite it with `patchwrite bind --update` and review the diff")  # fmt: skip
        self.text = text

    def __reduce__(self) -> tuple[object, ...]:
        return (OldBindings, (self.path, self.text))


def _problem(path: Path, what: str) -> InputError:
    # `bind --update` cannot start from a file it cannot read: restore it (git), or delete it and bind afresh
    return InputError(path, f"is not a bindings file ({what}); restore it from version control, or delete it "
                      "and rerun `patchwrite bind`")  # fmt: skip


def parse(text: str, path: Path, root: Path) -> list[FileBinding]:
    """Return the bindings a file's text holds; raise InputError naming the file and the problem."""
    data = load_json(text, path)
    if isinstance(data, dict) and data.get("version") == 1:
        raise OldBindings(path, text)
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("bindings"), list):
        raise _problem(path, f'expected {{"version": {VERSION}, "root": ..., "bindings": [...]}}')
    return [_row(row, number, path, root.parent) for number, row in enumerate(data["bindings"], start=1)]


def _row(row: Any, number: int, path: Path, base: Path) -> FileBinding:
    if not isinstance(row, dict) or any(k not in row for k in _FIELDS):
        missing = [k for k in _FIELDS if not isinstance(row, dict) or k not in row]
        raise _problem(path, f"binding {number} lacks {', '.join(missing)}")
    anchor = row["anchor"]
    line = row["line"]
    if not isinstance(anchor, dict) or not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise _problem(path, f"binding {number} has a bad anchor or line")
    if not isinstance(row["token"], str) or not isinstance(row["value"], str):
        raise _problem(path, f"binding {number} has a bad token or value")  # a null was shown as `None`
    transform = str(row["transform"])
    if transform not in TRANSFORMS and not transform.startswith("scale:1e"):
        raise _problem(path, f"binding {number} has an unknown transform {transform!r}")
    manual = transform == MANUAL
    if manual and not isinstance(row.get("reason"), str):
        raise _problem(path, f"binding {number} is typed by hand (manual) but gives no reason")
    if not manual and (not isinstance(row["log"], str) or not isinstance(row["at"], str)):
        raise _problem(path, f"binding {number} names no log entry (log and at)")
    formula = row["formula"]
    if formula is not None:
        if not isinstance(formula, dict) or not isinstance(formula.get("operands"), list):
            raise _problem(path, f"binding {number} has a bad formula")
        formula = {**formula, "operands": [{**o, "log": base / str(o.get("log", ""))} for o in formula["operands"]
                                           if isinstance(o, dict)]}  # fmt: skip
    if not isinstance(row["alternatives"], list):
        raise _problem(path, f"binding {number} has bad alternatives")
    alternatives = [{**a, "log": str(base / str(a.get("log", "")))} for a in row["alternatives"] if isinstance(a, dict)]
    return FileBinding(
        base / str(row["file"]),
        {str(k): str(v) for k, v in anchor.items() if k in (*CELL_KEYS, *PROSE_KEYS)},
        row["line"],
        str(row["token"]),
        None if manual else base / str(row["log"]),
        None if manual else str(row["at"]),
        str(row["value"]),
        transform,
        formula,
        alternatives,
        str(row["reason"]) if manual else None,
    )
