"""The labelled real papers of tests/bind_papers/: every labels.json says what its files and logs hold.

A label is a person's judgement of one printed number (issue #27): the log entry it reports, a
formula over entries, or none. These tests run no binder; they hold each label to the vendored
files themselves: the schema, the token on its line of the `.tex`, and each named entry read by
`logentries` (through `logread.load_entries`, as the lock reads it) with the labelled value.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pytest

from pytest_patchwrite.numbers.logread import load_entries

PAPERS = Path(__file__).parent / "bind_papers"
BENCH = Path(__file__).parent.parent / "bench" / "bench_binder_labels.py"
LABEL_FILES = sorted(PAPERS.glob("*/labels.json"))
KINDS = {"entry", "derived", "none"}
SETS = ("A", "B", "C", "D", "E")  # A: development; B to E: held out, labelled by other people before any binder run
TRANSFORMS = ("identity", "percent")


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _same(raw: str, value: object) -> bool:
    if raw == str(value):
        return True
    try:
        return Decimal(raw) == Decimal(str(value))
    except InvalidOperation:
        return False


class _Logs:
    """The entries of a paper's logs, each log read once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.read: dict[str, Any] = {}

    def problem(self, log: str, at: str, value: object) -> str | None:
        """Return what is wrong with the entry `at` of `log` (None when it holds `value`)."""
        path = self.folder / log
        if not path.is_file():
            return f"log {log} is not in the folder"
        if log not in self.read:
            self.read[log] = load_entries(path)
        entry = self.read[log].at(at)
        if entry is None:
            return f"{log} has no entry at {at!r}"
        if value is not None and not _same(entry.raw, value):
            return f"{log} {at} holds {entry.raw}, not {value}"
        return None


def _number_problems(number: dict[str, Any], folder: Path, logs: _Logs, lines: dict[str, list[str]]) -> list[str]:
    where = f"{number.get('file')}:{number.get('line')} {number.get('token')!r}"
    for key in ("file", "line", "token", "label"):
        if key not in number:
            return [f"{where}: no {key!r}"]
    if number["label"] not in KINDS:
        return [f"{where}: label {number['label']!r} is none of {sorted(KINDS)}"]
    source = folder / number["file"]
    if number["file"] not in lines:
        if not source.is_file():
            return [f"{where}: {number['file']} is not in the folder"]
        lines[number["file"]] = source.read_text(encoding="utf-8").splitlines()
    text = lines[number["file"]]
    if not 1 <= number["line"] <= len(text) or number["token"] not in text[number["line"] - 1]:
        return [f"{where}: the token is not on that line"]
    out: list[str] = []
    if number["label"] == "entry":
        transform = number.get("transform", "")
        if not (transform in TRANSFORMS or transform.startswith("scale:")):
            out.append(f"{where}: transform {transform!r}")
        out.append(logs.problem(number.get("log", ""), number.get("at", ""), number.get("value")) or "")
        for alt in number.get("also", []):
            out.append(logs.problem(alt["log"], alt["at"], alt.get("value")) or "")
    elif number["label"] == "derived":
        if not number.get("formula"):
            out.append(f"{where}: a derived label without a formula")
        for item in number.get("entries", []):
            out.append(logs.problem(item["log"], item["at"], item.get("value")) or "")
    elif not number.get("reason"):
        out.append(f"{where}: a none label without a reason")
    return [f"{where}: {p}" if not p.startswith(where) else p for p in out if p]


@pytest.mark.parametrize("path", LABEL_FILES, ids=[p.parent.name for p in LABEL_FILES])
def test_labels_hold_against_the_vendored_files(path: Path) -> None:
    data = _load(path)
    folder = path.parent
    assert data.get("set") in SETS, f"{path}: set {data.get('set')!r}"
    assert (folder / data["root"]).is_file(), f"{path}: root {data['root']} missing"
    assert "\\documentclass" in (folder / data["root"]).read_text(encoding="utf-8")
    assert data.get("source", "").startswith("github:") and data.get("license"), f"{path}: source and license"
    assert (folder / "SOURCE.md").is_file(), f"{folder}: no SOURCE.md"
    assert any(p.name.upper().startswith(("LICENSE", "COPYING")) for p in folder.iterdir()), f"{folder}: no licence"
    for pattern in data["logs"]:
        assert list(folder.glob(pattern)), f"{path}: log pattern {pattern} matches no file"
    logs, lines = _Logs(folder), {}
    problems = [p for n in data["numbers"] for p in _number_problems(n, folder, logs, lines)]
    assert not problems, "\n".join(problems)
    seen: dict[tuple[str, int, str], int] = {}
    for n in data["numbers"]:
        key = (n["file"], n["line"], n["token"])
        seen[key] = seen.get(key, 0) + 1
        assert seen[key] <= lines[n["file"]][n["line"] - 1].count(n["token"]), f"{path}: {key} labelled twice"


def test_the_labelled_sets_are_large_enough() -> None:
    """Set A alone holds at least 100 labelled numbers from at least five papers, with each kind present."""
    numbers = [(p.parent.name, n) for p in LABEL_FILES if _load(p)["set"] == "A" for n in _load(p)["numbers"]]
    kinds = {n["label"] for _, n in numbers}
    assert len(numbers) >= 100 and len({name for name, _ in numbers}) >= 5 and kinds == KINDS


def test_the_held_out_set_c_is_large_enough() -> None:
    """Set C holds at least 200 labelled numbers from at least three papers, each kind present."""
    numbers = [(p.parent.name, n) for p in LABEL_FILES if _load(p)["set"] == "C" for n in _load(p)["numbers"]]
    kinds = {n["label"] for _, n in numbers}
    assert len(numbers) >= 200 and len({name for name, _ in numbers}) >= 3 and kinds == KINDS


def test_the_held_out_set_d_is_large_enough() -> None:
    """Set D holds at least 250 labelled numbers from at least four papers, each kind present."""
    numbers = [(p.parent.name, n) for p in LABEL_FILES if _load(p)["set"] == "D" for n in _load(p)["numbers"]]
    kinds = {n["label"] for _, n in numbers}
    assert len(numbers) >= 250 and len({name for name, _ in numbers}) >= 4 and kinds == KINDS


def test_the_held_out_set_e_is_large_enough() -> None:
    """Set E holds at least 400 labelled numbers from at least four papers, each kind present."""
    numbers = [(p.parent.name, n) for p in LABEL_FILES if _load(p)["set"] == "E" for n in _load(p)["numbers"]]
    kinds = {n["label"] for _, n in numbers}
    assert len(numbers) >= 400 and len({name for name, _ in numbers}) >= 4 and kinds == KINDS


def test_the_bench_can_choose_every_set() -> None:
    """`bench_binder_labels.py --set X` accepts every set a labels.json names (and no other)."""
    sys.path.insert(0, str(BENCH.parent))
    try:
        spec = importlib.util.spec_from_file_location("bench_binder_labels", BENCH)
        assert spec is not None and spec.loader is not None
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(BENCH.parent))
    assert bench.SETS == SETS
    assert {_load(p)["set"] for p in LABEL_FILES} == set(SETS)


def test_a_wrong_label_is_reported(tmp_path: Path) -> None:
    """The check can fail: a label whose value is not the log's, or whose token is not on its line, is named."""
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "main.tex").write_text("\\documentclass{article}\nAccuracy was 91.4\\%.\n", encoding="utf-8")
    (folder / "r.json").write_text(json.dumps({"test": {"acc": 0.914}}), encoding="utf-8")
    logs, lines = _Logs(folder), {}
    good = {"file": "main.tex", "line": 2, "token": "91.4\\%", "label": "entry", "log": "r.json", "at": "test.acc",
            "value": "0.914", "transform": "percent"}  # fmt: skip
    assert _number_problems(good, folder, logs, lines) == []
    wrong_value = dict(good, value="0.915")
    assert "holds 0.914, not 0.915" in _number_problems(wrong_value, folder, logs, lines)[0]
    wrong_line = dict(good, line=1)
    assert "not on that line" in _number_problems(wrong_line, folder, logs, lines)[0]
    wrong_at = dict(good, at="test.f1")
    assert "no entry at 'test.f1'" in _number_problems(wrong_at, folder, logs, lines)[0]
