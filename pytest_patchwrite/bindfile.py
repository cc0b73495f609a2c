"""The bindings file `<root stem>.bindings.json`: a reviewed lockfile tying each empirical number to its log entry.

Schema (version 1; `file` and `log` relative to the root's directory)::

    {"version": 1, "root": "main.tex", "bindings": [
      {"file": "sections/results.tex", "anchor": {"before": "Accuracy was", "after": "compared with the"},
       "line": 3, "token": "91.4\\\\%", "log": "results.json", "at": "ours.clean_acc", "value": "0.9142",
       "transform": "percent", "formula": null, "alternatives": []}]}

Bindings are sorted by file and line (in reading order within a line) and written with a fixed key order, so a change
reads as a small diff. Only `patchwrite bind` and `pytest --patchwrite-bind` write it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError
from .inputs import load_json

VERSION = 1
TRANSFORMS = ("identity", "percent", "derived")
_FIELDS = ("file", "anchor", "line", "token", "log", "at", "value", "transform", "formula", "alternatives")


@dataclass
class FileBinding:
    """One binding as the file holds it, with `file` and `log` resolved against the root's directory."""

    file: Path
    before: str
    after: str
    line: int
    token: str
    log: Path
    at: str
    value: str
    transform: str
    formula: dict[str, Any] | None = None
    alternatives: list[dict[str, str]] = field(default_factory=list)


def default_path(root: Path, magic: dict[str, str]) -> Path:
    """Return where a manuscript's bindings live: `% !patchwrite bindings = FILE`, else `<root stem>.bindings.json`."""
    named = magic.get("patchwrite.bindings", "").strip()
    if named:
        return (root.parent / named).absolute()
    return root.with_name(root.stem + ".bindings.json").absolute()


def _rel(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def _formula_json(formula: dict[str, Any] | None, base: Path) -> dict[str, Any] | None:
    if formula is None:
        return None
    out: dict[str, Any] = {"op": formula["op"]}
    if "power" in formula:
        out["power"] = formula["power"]
    out["operands"] = [
        {"log": _rel(Path(o["log"]), base), "at": o["at"], "transform": o["transform"],
         **({"places": o["places"]} if o.get("places") is not None else {})}
        for o in formula["operands"]
    ]  # fmt: skip
    return out


def to_json(bindings: list[FileBinding], root: Path) -> dict[str, Any]:
    """Return the file's JSON object for `bindings` of the manuscript rooted at `root`, sorted."""
    base = root.parent
    rows = []
    for b in bindings:
        rows.append({
            "file": _rel(b.file, base),
            "anchor": {"before": b.before, "after": b.after},
            "line": b.line,
            "token": b.token,
            "log": _rel(b.log, base),
            "at": b.at,
            "value": b.value,
            "transform": b.transform,
            "formula": _formula_json(b.formula, base),
            "alternatives": [{**a, "log": _rel(Path(a["log"]), base)} for a in b.alternatives],
        })  # fmt: skip
    rows.sort(key=lambda r: (r["file"], r["line"]))  # stable: numbers of one line stay in reading order
    return {"version": VERSION, "root": root.name, "bindings": rows}


def dumps(data: dict[str, Any]) -> str:
    """Return the file's text: two-space indent, one binding field per line, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _problem(path: Path, what: str) -> InputError:
    return InputError(path, f"is not a bindings file ({what}); rewrite it with `patchwrite bind`")


def parse(text: str, path: Path, root: Path) -> list[FileBinding]:
    """Return the bindings a file's text holds; raise InputError naming the file and the problem."""
    data = load_json(text, path)
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("bindings"), list):
        raise _problem(path, f'expected {{"version": {VERSION}, "root": ..., "bindings": [...]}}')
    base = root.parent
    out = []
    for number, row in enumerate(data["bindings"], start=1):
        if not isinstance(row, dict) or any(k not in row for k in _FIELDS):
            missing = [k for k in _FIELDS if not isinstance(row, dict) or k not in row]
            raise _problem(path, f"binding {number} lacks {', '.join(missing)}")
        anchor = row["anchor"]
        if not isinstance(anchor, dict) or not isinstance(row["line"], int):
            raise _problem(path, f"binding {number} has a bad anchor or line")
        transform = str(row["transform"])
        if transform not in TRANSFORMS and not transform.startswith("scale:1e"):
            raise _problem(path, f"binding {number} has an unknown transform {transform!r}")
        formula = row["formula"]
        if formula is not None:
            if not isinstance(formula, dict) or not isinstance(formula.get("operands"), list):
                raise _problem(path, f"binding {number} has a bad formula")
            formula = {**formula, "operands": [{**o, "log": base / str(o.get("log", ""))} for o in formula["operands"]
                                               if isinstance(o, dict)]}  # fmt: skip
        alternatives = [{**a, "log": str(base / str(a.get("log", "")))} for a in row["alternatives"]
                        if isinstance(a, dict)]  # fmt: skip
        out.append(FileBinding(base / str(row["file"]), str(anchor.get("before", "")), str(anchor.get("after", "")),
                               row["line"], str(row["token"]), base / str(row["log"]), str(row["at"]),
                               str(row["value"]), transform, formula, alternatives))  # fmt: skip
    return out


def match(bindings: list[FileBinding], occurrences: list[tuple[Path, str, str, int, str]]) -> dict[int, int]:
    """Return occurrence index -> binding index: same file and anchor first, then one side of it, nearest line.

    `occurrences`: (file, anchor before, anchor after, line, token) of each number as the text stands now;
    a number whose words around it are unchanged keeps its binding wherever its line moved.
    """
    pairs: dict[int, int] = {}
    used: set[int] = set()
    by_file: dict[Path, list[int]] = {}
    for j, b in enumerate(bindings):
        by_file.setdefault(b.file.resolve(), []).append(j)
    resolved = [o[0].resolve() for o in occurrences]

    # numbers whose anchors are alike (the cells of one column in rows that read the same) pair in reading
    # order, not by their token: a swap of two of them must meet the bindings of the places it swapped
    groups: dict[tuple[Path, str, str], tuple[list[int], list[int]]] = {}
    for i, occ in enumerate(occurrences):
        groups.setdefault((resolved[i], occ[1], occ[2]), ([], []))[0].append(i)
    for j, b in enumerate(bindings):
        key = (b.file.resolve(), b.before, b.after)
        if key in groups:
            groups[key][1].append(j)
    for found, bound in groups.values():
        if found and len(found) == len(bound):
            for i, j in zip(found, sorted(bound, key=lambda k: (bindings[k].line, k)), strict=True):
                pairs[i] = j
                used.add(j)

    def sweep(fits: Any) -> None:
        for i, occ in enumerate(occurrences):
            if i in pairs:
                continue
            options = [j for j in by_file.get(resolved[i], []) if j not in used and fits(occ, bindings[j])]
            if options:
                j = min(options, key=lambda k: (abs(bindings[k].line - occ[3]), bindings[k].token != occ[4], k))
                pairs[i] = j
                used.add(j)

    sweep(lambda o, b: (o[1], o[2]) == (b.before, b.after))
    sweep(lambda o, b: (o[1] == b.before or o[2] == b.after) and (o[1] or o[2]))
    return pairs
