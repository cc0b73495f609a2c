"""The order-swap table, batch statistics, the literature-review validator and the halt rule, through `rate`."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import score

from pytest_patchwrite.autoraters.litreview import AXES
from pytest_patchwrite.autoraters.sxs import aggregate, batch, wilson
from pytest_patchwrite.cli import main

# call 1 shows A first, call 2 shows B first; winners as each call wrote them
A1, B1, A2, B2 = "paper_1", "paper_2", "paper_2", "paper_1"
NINE = [  # (call1, call2, 5 classes, 3 classes, consensus) for A
    ("AA", A1, A2, "win", "win", "win"),
    ("AT", A1, "tie", "leaning_win", "win", "tie"),
    ("TA", "tie", A2, "leaning_win", "win", "tie"),
    ("AB", A1, B2, "tie", "tie", "tie"),
    ("BA", B1, A2, "tie", "tie", "tie"),
    ("TT", "tie", "tie", "tie", "tie", "tie"),
    ("TB", "tie", B2, "leaning_loss", "loss", "tie"),
    ("BT", B1, "tie", "leaning_loss", "loss", "tie"),
    ("BB", B1, B2, "loss", "loss", "loss"),
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip().startswith("{") else {"stderr": out.err}


def test_all_nine_rows_and_unreadable_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [{"pair": name, "call1": c1, "call2": c2} for name, c1, c2, *_ in NINE]
    lines += [{"pair": "p1", "call1": "paper1", "call2": "tie"}, {"pair": "pa", "call1": A1, "call2": "Paper A"},
              {"pair": "null", "call1": None, "call2": A2}, {"pair": "none"}]  # fmt: skip
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    code, data = run(capsys, "rate", "sxs", "--verdicts", str(path), "--json")
    assert code == 0
    rows = {p["pair"]: p for p in data["pairs"]}
    for name, _c1, _c2, five, three, consensus in NINE:
        assert (rows[name]["category_5pt"], rows[name]["category_3pt"], rows[name]["outcome"]) == (
            five,
            three,
            consensus,
        ), name
    for name in ("p1", "pa", "null", "none"):
        assert "error" in rows[name] and "outcome" not in rows[name]
    assert (data["n"], data["n_errors"]) == (9, 4)
    assert data["win_rate"] == pytest.approx(1 / 9) and data["loss_rate"] == pytest.approx(1 / 9)
    assert data["tie_rate"] == pytest.approx(7 / 9) and data["win_rate_half_ties"] == pytest.approx(4.5 / 9)
    assert data["position_inconsistency"] == pytest.approx(6 / 9)
    lo, hi = data["interval"]
    assert lo < 1 / 9 < hi and (lo, hi) == pytest.approx(wilson(1, 9))
    assert main(["rate", "sxs", "--verdicts", str(path), "--fail-on-error"]) == 1


def test_wilson_interval_known_value() -> None:
    lo, hi = wilson(50, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.4038, 0.5962)


DEEP = "[" * 100_000 + "]" * 100_000


def strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in --json output")

    return json.loads(text, parse_constant=refuse)


def test_a_bad_verdict_line_is_that_lines_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v.jsonl"
    lines = ['{"pair": 1, "call1": "paper_1", "call2": "paper_2"}', "{oops",
             f'{{"pair": 2, "call1": "tie", "call2": {DEEP}}}', "[3]",
             '{"pair": 4, "call1": "tie", "call2": "tie"}']  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    assert main(["rate", "sxs", "--verdicts", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}:2: not valid JSON" in out and f"{path}:3: nesting too deep" in out
    assert f"{path}:4: expected {{" in out and "2 pair(s), 3 unreadable" in out
    code, data = run(capsys, "rate", "sxs", "--verdicts", str(path), "--json")
    errors = {p["line"]: p for p in data["pairs"] if "error" in p}
    assert code == 0 and set(errors) == {2, 3, 4} and data["n"] == 2
    assert main(["rate", "sxs", "--verdicts", str(path), "--fail-on-error"]) == 1


@pytest.mark.parametrize("pair", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_verdicts_json_output_is_strict_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], pair: str) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(
        f'{{"pair": {pair}, "call1": "tie", "call2": "tie"}}\n{{"pair": 2, "call1": "tie", "call2": "tie"}}\n'
    )
    assert main(["rate", "sxs", "--verdicts", str(path), "--json"]) == 0
    data = strict_json(capsys.readouterr().out)
    assert (data["n"], data["n_errors"]) == (1, 1)
    assert data["pairs"][0]["pair"] is None and data["pairs"][0]["line"] == 1


def test_a_pair_recorded_twice_is_never_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text('{"pair": 1, "call1": "paper_1", "call2": "paper_2"}\n'
                    '{"pair": "x", "call1": "tie", "call2": "tie"}\n'
                    '{"pair": 1, "call1": "paper_2", "call2": "paper_1"}\n')  # fmt: skip
    code, data = run(capsys, "rate", "sxs", "--verdicts", str(path), "--json")
    assert (code, data["n"], data["n_errors"], data["tie_rate"]) == (0, 1, 2, 1.0)
    for row in (data["pairs"][0], data["pairs"][2]):
        assert row["pair"] == 1 and "lines 1, 3" not in row["error"] and "line 1, line 3" in row["error"]
    assert batch([(5, "tie", "tie"), (5.0, "tie", "tie")])["n_errors"] == 2


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [('{"overall_score":\n NaN}', 2, "NaN is not a JSON number"), ('{"overall_score": 1e999}', 1, "out of range"),
     (f'{{"overall_score": 60,\n"axis_scores": {DEEP}}}', 2, "nesting too deep"), ("{oops", 1, "not valid JSON")],
)  # fmt: skip
def test_every_rate_json_reader_names_file_and_line(
    tmp_path: Path, paper: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, problem: str
) -> None:
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    bad.write_text(text)
    good.write_text(json.dumps({"overall_score": 60, "axis_scores": {"a": 1}}))
    for argv in (["rate", "halt", str(bad), str(good)], ["rate", "halt", str(good), str(bad)],
                 ["rate", "litreview", str(paper), "--avg-citations", "59", "--score", str(bad)],
                 ["rate", "citation-f1", "--gt", str(paper), "--gen", str(paper),
                  "--gt-partition", str(bad)]):  # fmt: skip
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"{bad}:{line}: " in err and problem in err and "Traceback" not in err, argv


def test_pairs_csv_with_an_oversized_field_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.csv").write_text("gt,gen\na.tex," + "x" * 200_000 + "\n")
    assert main(["rate", "citation-f1", "--pairs", str(tmp_path / "p.csv")]) == 2
    assert f"{tmp_path / 'p.csv'}:2: not a readable CSV" in capsys.readouterr().err


BASE = 0.2 * 60 + 0.15 * 70 + 0.25 * 55 + 0.25 * 60 + 0.1 * 70 + 0.05 * 60  # 61.25


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    keys = ",".join(f"w{i}" for i in range(40))
    bib = "".join(f"@misc{{w{i}, title={{Work number {i} on topic {i * 7}}}, year=2020}}\n" for i in range(40))
    (tmp_path / "refs.bib").write_text(bib)
    (tmp_path / "p.tex").write_text(f"\\documentclass{{article}}\\begin{{document}}\\cite{{{keys}}}"
                                    "\\bibliography{refs}\\end{document}\n")  # fmt: skip
    return tmp_path / "p.tex"


def check(capsys: pytest.CaptureFixture[str], paper: Path, data: Any, avg: str = "59.18") -> tuple[int, dict]:
    path = paper.parent / "score.json"
    path.write_text(json.dumps(data))
    return run(capsys, "rate", "litreview", str(paper), "--avg-citations", avg, "--score", str(path), "--json")


def test_litreview_correct_score_validates(paper: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = check(capsys, paper, score())
    assert code == 0 and data["valid"] and data["errors"] == [] and data["cap_violations"] == []
    assert data["recomputed"]["base"] == pytest.approx(BASE) and data["recomputed"]["expected"] == pytest.approx(56.25)
    assert data["citations"] == {"unique": 40, "ratio_to_avg": round(40 / 59.18, 4), "judge_estimate": 40}


def test_litreview_penalty_as_minus_five_is_the_same(paper: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = check(capsys, paper, score(penalties=[{"reason": "weak gap statement", "points_deducted": -5}]))
    assert code == 0 and data["recomputed"]["expected"] == pytest.approx(56.25)


def test_litreview_wrong_weighted_sum_is_flagged_not_overwritten(
    paper: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = check(capsys, paper, score(overall_score=78))
    assert code == 1 and not data["valid"] and data["overall_score"] == 78
    assert data["recomputed"]["deviation"] == pytest.approx(78 - 56.25)
    assert "overall_score 78" in data["errors"][0]


def test_litreview_broken_cap_uses_the_real_count(paper: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 40 cited works against an average of 100: under half, so coverage is capped at 55 (the judge said 60)
    code, data = check(capsys, paper, score(), avg="100")
    assert code == 1 and not data["valid"]
    assert [(v["rule"], v["score"], v["limit"]) for v in data["cap_violations"]] == [("coverage_few_citations", 60, 55)]
    descriptive = score(penalties=[{"reason": "mostly descriptive, paper by paper", "points_deducted": 5}])
    descriptive["axis_scores"]["critical_analysis_and_synthesis"]["score"] = 70
    descriptive["overall_score"] = round(BASE + 0.25 * 15 - 5, 2)
    code, data = check(capsys, paper, descriptive)
    assert code == 1 and [v["rule"] for v in data["cap_violations"]] == ["critical_analysis_and_synthesis_cap"]


def test_litreview_missing_axis_is_a_schema_error(paper: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = copy.deepcopy(score())
    del data["axis_scores"]["positioning_and_novelty"]
    code, out = check(capsys, paper, data)
    assert code == 1 and not out["valid"] and out["recomputed"]["base"] is None
    assert any("positioning_and_novelty" in e and "required" in e for e in out["errors"])


def test_litreview_bad_input_exits_2(paper: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (paper.parent / "s.json").write_text("{not json")
    assert (
        main(["rate", "litreview", str(paper), "--avg-citations", "59", "--score", str(paper.parent / "s.json")]) == 2
    )
    assert "s.json:1: not valid JSON" in capsys.readouterr().err
    assert main(["rate", "litreview", str(paper), "--avg-citations", "lots", "--score", "x"]) == 2


def halt(capsys: pytest.CaptureFixture[str], tmp_path: Path, prev: Any, curr: Any, *extra: str) -> tuple[int, dict]:
    (tmp_path / "a.json").write_text(json.dumps(prev))
    (tmp_path / "b.json").write_text(json.dumps(curr))
    return run(capsys, "rate", "halt", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json", *extra)


def axes(**values: float) -> dict[str, Any]:
    return {a: {"score": values.get(a, 50.0)} for a in AXES}


@pytest.mark.parametrize(
    ("prev", "curr", "decision", "code"),
    [
        ((60, {}), (62, {}), "accept_improved", 0),
        ((60, {}), (60, {"relevance_and_focus": 52}), "accept_tied_non_negative", 0),
        ((60, {}), (60, {"relevance_and_focus": 48}), "revert_tied_negative", 1),
        ((60, {}), (58, {"relevance_and_focus": 70}), "revert_decreased", 1),
    ],
)
def test_halt_decisions_with_literature_review_axes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prev: Any, curr: Any, decision: str, code: int
) -> None:
    got, data = halt(capsys, tmp_path, {"overall_score": prev[0], "axis_scores": axes(**prev[1])},
                     {"overall_score": curr[0], "axis_scores": axes(**curr[1])})  # fmt: skip
    assert (got, data["decision"]) == (code, decision) and set(data["axes"]) == set(AXES)


def test_halt_plateau_and_no_shared_axis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prev, curr = {"overall_score": 60, "axis_scores": axes()}, {"overall_score": 60.5, "axis_scores": axes()}
    code, data = halt(capsys, tmp_path, prev, curr, "--streak", "2")
    assert (code, data["decision"], data["streak"]) == (1, "halt_plateau", 3)
    code, data = halt(capsys, tmp_path, prev, curr, "--streak", "1")
    assert (code, data["decision"]) == (0, "accept_improved")
    code, data = halt(capsys, tmp_path, prev, {"overall_score": 61, "axis_scores": {"clarity": 3}})
    assert code == 2 and "share no axis" in data["stderr"]


MIRROR = {"win": "loss", "leaning_win": "leaning_loss", "tie": "tie", "leaning_loss": "leaning_win", "loss": "win"}


@given(st.sampled_from(["paper_1", "paper_2", "tie"]), st.sampled_from(["paper_1", "paper_2", "tie"]))
def test_swapping_the_papers_mirrors_every_column(call1: str, call2: str) -> None:
    # judging B against A asks the same two prompts in the other order: B's first call is A's second
    a, b = aggregate(call1, call2), aggregate(call2, call1)
    assert (MIRROR[a.category_5pt], MIRROR[a.category_3pt], MIRROR[a.outcome]) == (
        b.category_5pt, b.category_3pt, b.outcome)  # fmt: skip
    assert a.consistent == b.consistent


@given(st.lists(st.tuples(st.integers(), st.sampled_from(["paper_1", "paper_2", "tie", "x", None]),
                          st.sampled_from(["paper_1", "paper_2", "tie", "Paper B"]))))  # fmt: skip
def test_batch_rates_add_up_and_errors_are_excluded(rows: list[tuple[int, Any, Any]]) -> None:
    result = batch(rows)
    assert result["n"] + result["n_errors"] == len(rows)
    if result["n"]:
        assert result["win_rate"] + result["tie_rate"] + result["loss_rate"] == pytest.approx(1.0)
        lo, hi = result["interval"]
        assert lo <= result["win_rate"] <= hi
