"""How logs and printed numbers are read: JSON Lines in a `.json`, separated integers, glued units, numeric strings
in logs, a numeric CSV header, a `.` thousands separator in a Turkish text, CSV locators with the row label.

Every case is a small real file of our own in tmp_path, read by the real scanner, log reader and evidence lock.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from decimal import Decimal
from pathlib import Path

import pytest

from pytest_patchwrite.errors import InputError
from pytest_patchwrite.files import inputs, streamread
from pytest_patchwrite.flows.bind import bind_root, write_bindings
from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.numbers import logread
from pytest_patchwrite.snapshot.manuscript import load_manuscript
from pytest_patchwrite.tex.latex import scan
from pytest_patchwrite.tex.texnumbers import document_language

PROFILE = '{"phase": "warmup", "ms": 12.5}\n{"phase": "steady", "ms": 8.25, "peak_mb": 0.19}\n'


def paper(directory: Path, body: str, logs: dict[str, str], preamble: str = "") -> Path:
    """Write a root manuscript declaring its logs, and the logs as they are."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in logs.items():
        (directory / name).write_text(content)
    root = directory / "main.tex"
    root.write_text(f"% !patchwrite log = {', '.join(logs)}\n\\documentclass{{article}}\n{preamble}"
                    f"\\begin{{document}}\n{body}\\end{{document}}\n")  # fmt: skip
    return root


def findings(root: Path) -> list[tuple[str, str]]:
    """Return the number lock's findings as (kind, token)."""
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    assert report.numbers is not None
    return [(v.kind, v.token) for v in report.numbers]


def messages(root: Path) -> list[str]:
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    return [v.message for v in report.numbers or []]


def read(text: str, language: str = "") -> list[tuple[str, Decimal, int]]:
    return [(n.text, n.value, n.decimals) for n in scan(text, "a.tex", language=language).numbers]


def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logread, "_PARSED", OrderedDict())


# JSON Lines, whatever the extension


@pytest.mark.parametrize("streamed", [False, True])
def test_a_json_file_of_one_object_per_line_is_read_as_json_lines(
    tmp_path: Path, streamed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if streamed:
        monkeypatch.setattr(inputs, "HELD_FILE_BYTES", 0)
        monkeypatch.setattr(streamread, "STREAM_PIECE", 7)
    fresh(monkeypatch)
    root = paper(tmp_path, "A steady step took 8.25 ms after a warmup of 12.5 ms.\n", {"profile.json": PROFILE})
    assert findings(root) == []  # before: exit 2, "not valid JSON (Extra data)"
    data = logread.load_entries(tmp_path / "profile.json")
    assert [(e.at, e.raw) for e in data.entries] == [("[0].ms", "12.5"), ("[1].ms", "8.25"), ("[1].peak_mb", "0.19")]
    assert (tmp_path / "main.tex").write_text((tmp_path / "main.tex").read_text().replace("8.25", "8.26"))
    assert findings(root) == [("unattested_number", "8.26")]


@pytest.mark.parametrize("streamed", [False, True])
def test_a_json_file_that_is_neither_json_nor_json_lines_names_its_line(
    tmp_path: Path, streamed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if streamed:
        monkeypatch.setattr(inputs, "HELD_FILE_BYTES", 0)
    fresh(monkeypatch)
    log = tmp_path / "profile.json"
    log.write_text('{"ms": 12.5}\n{"ms": 8.25,\n')
    with pytest.raises(InputError) as caught:
        logread.load_entries(log)
    assert caught.value.line == 2 and "not valid JSON" in caught.value.problem
    assert caught.value.path == str(log)


def test_a_pretty_printed_json_document_is_still_one_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "HELD_FILE_BYTES", 0)  # streamed: the first lines decide, then the whole is parsed
    fresh(monkeypatch)
    log = tmp_path / "results.json"
    log.write_text(json.dumps({"test": {"acc": 0.914}, "runs": [1, 2]}, indent=2))
    assert [e.at for e in logread.load_entries(log).entries] == ["test.acc", "runs[0]", "runs[1]"]


# integers with separators


def test_separated_integers_read_as_one_number_in_all_three_forms() -> None:
    text = "We kept 10,578 documents, 10{,}578 tokens and 10\\,578 words; $n = 10{,}578$.\n"
    numbers = scan(text, "a.tex").numbers
    assert [(n.value, n.decimals, n.grouped) for n in numbers] == [(Decimal(10578), 0, True)] * 4


def test_commas_that_are_punctuation_do_not_join_digits() -> None:
    # in math TeX sets `1,234` as the list 1, 234; a list, a pair and coordinates are several numbers
    text = "In math $x = 1,234$ and $1,2$, lists 1,2,3 and 1,234,5, the pair (3,500) and the point [2,000].\n"
    values = [int(v) for _, v, _ in read(text)]
    assert values == [1, 234, 1, 2, 1, 2, 3, 1, 234, 5, 3, 500, 2, 0]
    assert not any(n.grouped for n in scan(text, "a.tex").numbers)
    # a prose comma with a space is no list: the count after it keeps its separator
    assert [v for _, v, _ in read("Scores of 0.5, 1,234 documents and 2,500, 3 runs.\n")] == [
        Decimal("0.5"), Decimal(1234), Decimal(2500), Decimal(3)]  # fmt: skip


def test_a_separated_integer_is_no_decimal_for_the_pool_rule(tmp_path: Path) -> None:
    root = paper(tmp_path, "The corpus holds 10,578 documents; accuracy was 91.4\\%.\n", {"r.json": '{"acc": 0.914}'})
    assert findings(root) == []  # under `decimals` a count is not reported unattested without a bindings file


# glued units and magnitudes


def test_a_glued_unit_reads_as_a_number_with_its_scale() -> None:
    text = "Peak memory was 0.19MB for 24.4M parameters, 3.2k steps over 1.5B tokens, 12.5ms a step, 175B params.\n"
    numbers = scan(text, "a.tex").numbers
    assert [(n.text, n.value, n.unit, n.scale) for n in numbers] == [
        ("0.19MB", Decimal("0.19"), "MB", 6),
        ("24.4M", Decimal("24.4"), "M", 6),
        ("3.2k", Decimal("3.2"), "k", 3),
        ("1.5B", Decimal("1.5"), "B", 9),
        ("12.5ms", Decimal("12.5"), "ms", -3),
        ("175B", Decimal(175), "B", 9),
    ]


def test_a_model_size_is_a_name_not_a_number() -> None:
    text = ("A 7B model, Llama 7B, Qwen2.5-1.5B, OPT (1.3B), a 1.5B-parameter model, the 7B and 13B models, "
            "LLaMA-13B, a 1.5B MoE model, Qwen3-1.7B through 32B, faithful up to 70B, 3D, 2x.\n")  # fmt: skip
    assert read(text) == []


def test_the_pool_rule_does_not_read_glued_units(tmp_path: Path) -> None:
    # the pool rule checks what it always checked: 24.4M was never one of its numbers
    root = paper(tmp_path, "It has 24.4M parameters and 91.4\\% accuracy.\n", {"r.json": '{"acc": 0.914}'})
    assert findings(root) == []


# numeric strings in logs


def test_numeric_strings_of_a_log_are_entries_with_value_and_scale(tmp_path: Path) -> None:
    log = tmp_path / "summary.json"
    log.write_text(json.dumps({"params": "27.2B", "acc": "91.4%", "docs": "1,234", "name": "ours", "id": "x9"}))
    got = [(e.at, e.raw, e.unit, e.scale, e.scaled) for e in logread.load_entries(log).entries]
    assert got == [
        ("params", "27.2", "B", 9, Decimal("2.72E+10")),
        ("acc", "91.4", "%", 0, Decimal("91.4")),
        ("docs", "1234", "", 0, Decimal(1234)),
    ]
    table = tmp_path / "sizes.csv"
    table.write_text('model,params,acc\nLlama,7B,91.4%\nQwen,1.5B,"88,000"\n')
    cells = [(e.at, e.raw, e.unit, e.scale) for e in logread.load_entries(table).entries]
    assert cells == [
        ("row 1 (model=Llama), column params", "7", "B", 9),
        ("row 1 (model=Llama), column acc", "91.4", "%", 0),
        ("row 2 (model=Qwen), column params", "1.5", "B", 9),
        ("row 2 (model=Qwen), column acc", "88000", "", 0),
    ]


# CSV headers and locators


def test_a_numeric_csv_header_names_the_columns_by_position(tmp_path: Path) -> None:
    log = tmp_path / "frame.csv"  # pandas' to_csv of a frame with integer column names
    log.write_text(",0,1\n0,0.914,0.87\n1,0.682,0.55\n")
    data = logread.load_entries(log)
    assert [(e.at, e.raw) for e in data.entries if e.column != "index"] == [
        ("row 1, column 0", "0.914"),
        ("row 1, column 1", "0.87"),
        ("row 2, column 0", "0.682"),
        ("row 2, column 1", "0.55"),
    ]
    assert {m.at: m.rows for m in data.means}["mean(column 0)"] == 2  # the header is no row
    gaps = tmp_path / "gaps.csv"  # pandas writes a missing value as nan: no entry, no label, no NaN mean
    gaps.write_text("model,acc\nBase,nan\nOurs,0.914\nMid,inf\nLow,0.5\n")
    kept = logread.load_entries(gaps)
    assert [(e.at, e.raw) for e in kept.entries] == [("row 2 (model=Ours), column acc", "0.914"),
                                                     ("row 4 (model=Low), column acc", "0.5")]  # fmt: skip
    assert [(m.at, m.raw) for m in kept.means] == [("mean(column acc)", "0.707")]
    headless = tmp_path / "plain.csv"  # data from the first line: still row 1
    headless.write_text("0.5,1.5\n0.7,1.7\n")
    assert [e.at for e in logread.load_entries(headless).entries][:2] == ["row 1, column 1", "row 1, column 2"]


def test_a_csv_locator_names_the_row_label_and_the_old_form_still_resolves(tmp_path: Path) -> None:
    log = tmp_path / "scores.csv"
    log.write_text("model,acc,f1\nBase,0.682,0.61\nOurs,0.914,0.88\n")
    data = logread.load_entries(log)
    assert data.entries[-1].at == "row 2 (model=Ours), column f1"
    assert data.at("row 2, column f1") is data.at("row 2 (model=Ours), column f1") is data.entries[-1]
    assert data.at("row 2 (model=Base), column f1") is None  # another row's label: not this cell


def test_a_bindings_file_with_old_csv_locators_still_checks(tmp_path: Path) -> None:
    table = "\\begin{tabular}{lc}\nModel & F1 \\\\\nBase & 0.61 \\\\\nOurs & 0.88 \\\\\n\\end{tabular}\n"
    root = paper(tmp_path, table, {"scores.csv": "model,acc,f1\nBase,0.682,0.61\nOurs,0.914,0.88\n"})
    outcome = bind_root(root, EvidenceConfig())
    written = json.loads(outcome.new_text)
    assert {b["at"] for b in written["bindings"]} == {"row 1 (model=Base), column f1", "row 2 (model=Ours), column f1"}
    old = outcome.new_text.replace(" (model=Base)", "").replace(" (model=Ours)", "")  # as an older bind wrote it
    write_bindings(outcome.path, old)
    assert findings(root) == []
    again = bind_root(root, EvidenceConfig())  # a new bind keeps the reviewed decisions as written
    assert again.new_text == old and again.conflicts == 0
    (tmp_path / "scores.csv").write_text("model,acc,f1\nBase,0.682,0.61\nOurs,0.914,0.86\n")  # the log changed
    assert ("binding_mismatch", "0.88") in findings(root)


# a `.` thousands separator where the language has it


def test_the_document_language_comes_from_babel_or_polyglossia() -> None:
    assert document_language(["\\documentclass{article}\n\\usepackage[english,turkish]{babel}\n"]) == "turkish"
    assert document_language(["\\documentclass[ngerman]{article}\n\\usepackage{babel}\n"]) == "ngerman"
    assert document_language(["\\usepackage{polyglossia}\n\\setmainlanguage{german}\n"]) == "german"
    assert document_language(["\\usepackage[turkish,main=english]{babel}\n"]) == "english"
    assert document_language(["% \\usepackage[turkish]{babel}\n\\documentclass{article}\n"]) == ""


def test_a_dot_groups_thousands_in_a_turkish_text(tmp_path: Path) -> None:
    body = 'Derlem 6.200 belge ve 1.250.000 s\\"{o}zc\\"{u}k i\\c{c}eriyor; s\\"{u}re 6.200,5 saniye.\n'
    assert read(body, "turkish") == [("6.200", Decimal(6200), 0), ("1.250.000", Decimal(1250000), 0),
                                     ("6.200,5", Decimal("6200.5"), 1)]  # fmt: skip
    assert read(body)[0] == ("6.200", Decimal("6.200"), 3)  # in English it is 6.2 printed to three places
    root = paper(tmp_path, body, {"r.json": '{"seconds": 6200.5}'}, "\\usepackage[turkish]{babel}\n")
    assert findings(root) == []  # 6200 is a count (not checked under `decimals`), 6200.5 is in the log


def test_a_dot_that_stays_ambiguous_is_reported_as_such(tmp_path: Path) -> None:
    body = "Derlem 6.200 belge i\\c{c}eriyor; do\\u{g}ruluk 91.45 idi.\n"  # a `.` decimal too: 6.200 may be 6.2
    numbers = scan(body, "a.tex", language="turkish").numbers
    assert numbers[0].readings == (Decimal("6.200"), Decimal(6200))
    root = paper(tmp_path, body, {"r.json": '{"acc": 91.45}'}, "\\usepackage[turkish]{babel}\n")
    assert findings(root) == [("unattested_number", "6.200")]
    assert "it reads as 6.200 or 6200 in this document's language" in messages(root)[0]
    (tmp_path / "r.json").write_text('{"acc": 91.45, "docs": 6200}')
    assert findings(root) == []  # either reading attests it
