"""Judges through a real OpenAI-compatible server on loopback: reply repair, retries, errors, the reply cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from judge_server import judge_server, prefer, shown_first
from support import score

from pytest_patchwrite.autoraters.judges import make_judge, run_sxs
from pytest_patchwrite.autoraters.prompts import SXS_SCHEMA
from pytest_patchwrite.autoraters.replies import parse_reply
from pytest_patchwrite.cli import main

PAPER = r"""\documentclass{{article}}
\begin{{document}}
\section{{Introduction}}
{marker} We build on prior work~\cite{{a}}.
\section{{Related Work}}
Earlier studies~\cite{{a,b}} compared encoders.
\section{{Method}}
Method text that the literature-review aspect never shows.
\bibliography{{refs}}
\end{{document}}
"""
BIB = "@article{a, title={Alpha networks}, year=2020}\n@article{b, title={Beta priors}, year=2021}\n"


@pytest.fixture
def papers(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "refs.bib").write_text(BIB)
    (tmp_path / "a.tex").write_text(PAPER.format(marker="ALPHA-MARK"))
    (tmp_path / "b.tex").write_text(PAPER.format(marker="BETA-MARK"))
    return tmp_path / "a.tex", tmp_path / "b.tex"


STYLES = {
    "plain": lambda s: s,
    "fenced": lambda s: f"Here is my verdict.\n```json\n{s}\n```\n",
    "trailing-comma": lambda s: s[:-1] + ",}",
    "latex-backslashes": lambda s: s.replace('"a"', r'"uses \cite{x} and \textbf{y}"'),
    "prose-around": lambda s: f"After reading both papers carefully: {s} I hope this helps.",
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_sxs_reads_every_reply_style(papers: tuple[Path, Path], tmp_path: Path, style: str) -> None:
    with judge_server(prefer("ALPHA-MARK", STYLES[style])) as server:
        judge = make_judge(server.spec(), cache_dir=tmp_path / "cache")
        result = run_sxs(judge, papers[0], papers[1])
    assert result.winners == ["paper_1", "paper_2"] and result.outcome == "win"
    assert all(c.ok for c in result.calls) and len(server.requests) == 2
    assert {shown_first(r, "ALPHA-MARK") for r in server.requests} == {True, False}  # the order was swapped
    assert all(r["temperature"] == 0 for r in server.requests)
    if style != "plain":
        assert result.calls[0].stage != "strict"


def test_unreadable_replies_are_errors_never_ties(papers: tuple[Path, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if shown_first(body, "ALPHA-MARK"):
            return 200, "I cannot decide, both papers are fine."
        return 200, json.dumps({"paper_1_analysis": "", "paper_2_analysis": "", "justification": "",
                                "winner": "Paper A"})  # fmt: skip

    with judge_server(respond) as server:
        code = main(["rate", "sxs", str(papers[0]), str(papers[1]), "--judge", server.spec(), "--json",
                     "--cache-dir", str(tmp_path / "c")])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["outcome"] is None and data["category_5pt"] is None
    first, second = data["calls"]
    assert first["winner"] is None and first["raw"] == "I cannot decide, both papers are fine."
    assert "no JSON object" in first["error"]
    assert second["winner"] is None and "Paper A" in second["error"]


def test_a_500_then_a_good_reply(papers: tuple[Path, Path], tmp_path: Path) -> None:
    failed: set[bool] = set()

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        first = shown_first(body, "BETA-MARK")
        if first not in failed:
            failed.add(first)
            return 500, "overloaded"
        return prefer("BETA-MARK")(body)

    with judge_server(respond) as server:
        result = run_sxs(make_judge(server.spec(), tmp_path / "c"), papers[0], papers[1])
    assert result.outcome == "loss" and len(server.requests) == 4


def test_unreachable_server_is_an_error(papers: tuple[Path, Path], tmp_path: Path) -> None:
    with judge_server(prefer("x")) as server:
        spec = server.spec()
    judge = make_judge(spec, tmp_path / "c")
    judge.backend.client.retries = 0  # type: ignore[attr-defined]
    result = run_sxs(judge, papers[0], papers[1])
    assert result.outcome is None and "cannot connect" in result.calls[0].errors[0]


def test_cache_second_run_makes_no_call(papers: tuple[Path, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    argv = ["rate", "sxs", str(papers[0]), str(papers[1]), "--aspect", "litreview", "--json", "--cache-dir",
            str(tmp_path / "cache")]  # fmt: skip
    with judge_server(prefer("ALPHA-MARK")) as server:
        assert main([*argv, "--judge", server.spec()]) == 0
        first = json.loads(capsys.readouterr().out)
        assert main([*argv, "--judge", server.spec()]) == 0
        second = json.loads(capsys.readouterr().out)
        assert len(server.requests) == 2
        assert "Method text" not in server.requests[0]["messages"][-1]["content"]  # only the review sections
        assert main([*argv, "--judge", server.spec("another-model")]) == 0  # the model is part of the key
        assert len(server.requests) == 4
        assert main([*argv, "--judge", server.spec(), "--fail-on", "tie,win"]) == 1  # cached win, now failing
        assert main([*argv, "--judge", server.spec(), "--fail-on", "lose"]) == 2
        assert len(server.requests) == 4
    capsys.readouterr()
    assert [c["cached"] for c in first["calls"]] == [False, False]
    assert [c["cached"] for c in second["calls"]] == [True, True] and second["outcome"] == first["outcome"] == "win"
    assert second["calls"][0]["prompt_version"] == "sxs-1" and second["calls"][0]["model"] == "openai:judge-test"


def test_litreview_judge_and_citation_f1_labels(papers: tuple[Path, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    def respond(body: dict[str, Any]) -> tuple[int, str]:
        system = body["messages"][0]["content"]
        if "grade the literature review" in system:
            return 200, "```json\n" + json.dumps(score(overall_score=90)) + "\n```"
        return 200, '{"1": "P0", "2": "p1"}' if "P0 (must cite)" in system else "?"

    with judge_server(respond) as server:
        code = main(["rate", "litreview", str(papers[0]), "--avg-citations", "iclr2025", "--judge", server.spec(),
                     "--json", "--cache-dir", str(tmp_path / "c")])  # fmt: skip
        lit = json.loads(capsys.readouterr().out)
        f1 = main(["rate", "citation-f1", "--gt", str(papers[0]), "--gen", str(papers[1]), "--judge", server.spec(),
                   "--json", "--cache-dir", str(tmp_path / "c")])  # fmt: skip
        data = json.loads(capsys.readouterr().out)
    # the judge said 90, the recomputed overall is 56.25: flagged, not overwritten; 2 works is under half of 59.18
    assert code == 1 and lit["overall_score"] == 90 and lit["recomputed"]["expected"] == pytest.approx(56.25)
    assert lit["call"]["parse_stage"] == "fenced" and lit["citations"]["unique"] == 2
    assert "coverage_few_citations" in [v["rule"] for v in lit["cap_violations"]]
    assert f1 == 0 and data["P0"]["n_gt"] == 1 and data["P0"]["f1"] == 1.0 and data["P1"]["f1"] == 1.0


@pytest.mark.parametrize(
    "raw",
    ['{"winner": "tie", "score": NaN}', '{"winner": "tie", "score": 1e999',
     '{"winner": ' + "[" * 100_000 + "]" * 100_000 + "}", '{"winner": ' + "[" * 100_000],
)  # fmt: skip
def test_replies_with_nan_infinity_or_deep_nesting_are_unreadable(raw: str) -> None:
    parsed = parse_reply(raw, SXS_SCHEMA)
    assert parsed.stage is None and not parsed.ok


@pytest.mark.parametrize(
    ("raw", "stage"),
    [('{"winner": "tie", "paper_1_analysis": "", "paper_2_analysis": "", "justification": "",}', "repaired"),
     ("no json at all", None), ('```\n{"winner": "tie"}\n```', "fenced")],
)  # fmt: skip
def test_parse_reply_stages(raw: str, stage: str | None) -> None:
    parsed = parse_reply(raw, SXS_SCHEMA)
    assert parsed.stage == stage
    if stage == "fenced":
        assert not parsed.ok and any("required" in e for e in parsed.errors)  # the schema still applies


def test_a_planted_or_tampered_reply_is_never_the_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_patchwrite.autoraters.cache import ReplyCache, cache_key

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache = ReplyCache(tmp_path / "replies")
    key = cache_key("v1", "judge-test", {"paper": "A"})
    planted = tmp_path / "replies" / key[:2] / f"{key}.json"
    planted.parent.mkdir(parents=True)
    planted.write_text(json.dumps({"raw": '{"winner": "paper_1"}', "winner": "paper_1"}))  # what a PR could commit
    assert cache.get(key) is None
    cache.put(key, {"raw": "ours", "winner": "paper_2"})
    assert cache.get(key) == {"raw": "ours", "winner": "paper_2"}
    entry = json.loads(planted.read_text())
    planted.write_text(json.dumps({**entry, "payload": entry["payload"].replace("paper_2", "paper_1")}))
    assert cache.get(key) is None


def test_rate_sxs_with_an_unreachable_judge_is_an_environment_error(
    papers: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with judge_server(prefer("x")) as server:
        spec = server.spec()  # the server is gone once the block ends: connection refused
    code = main(["rate", "sxs", str(papers[0]), str(papers[1]), "--judge", spec, "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and "environment error" in err and "no reply" in err
