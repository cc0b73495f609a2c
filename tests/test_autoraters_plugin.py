"""The `quality` item and the `sxs` / `citation_f1` / `litreview` fixtures, run for real with pytester and git."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from judge_server import Responder, judge_server, prefer
from support import score

PAPER = r"""\documentclass{{article}}
\begin{{document}}
\section{{Introduction}}
{intro} Encoders fail under occlusion~\cite{{a}}.
\section{{Related Work}}
Prior studies~\cite{{a,b}} compared encoders.
\section{{Results}}
{marker}
\bibliographystyle{{plain}}
\bibliography{{refs}}
\end{{document}}
"""
BIB = "@article{a, title={Alpha networks}, year=2020}\n@article{b, title={Beta priors}, year=2021}\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)


@pytest.fixture
def repo(pytester: pytest.Pytester) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: apt-get install git")
    (pytester.path / "refs.bib").write_text(BIB)
    (pytester.path / "main.tex").write_text(PAPER.format(intro="We study encoders.", marker="BASE-MARK"))
    git(pytester.path, "init", "-q", "-b", "main")
    git(pytester.path, "config", "user.email", "test@example.org")
    git(pytester.path, "config", "user.name", "Test")
    git(pytester.path, "add", "-A")
    git(pytester.path, "commit", "-qm", "base")
    return pytester.path


def judged(pytester: pytest.Pytester, spec: str, *extra: str) -> pytest.RunResult:
    pytester.makeini(f"[pytest]\npatchwrite_judge = {spec}\n")
    return pytester.runpytest_subprocess("--patchwrite-base", "main", "-k", "quality", "-p", "no:randomly", *extra)


def test_quality_item_fails_on_a_loss_with_both_verdicts(pytester: pytest.Pytester, repo: Path) -> None:
    (repo / "main.tex").write_text(PAPER.format(intro="We study encoders.", marker="CHANGE-MARK"))
    with judge_server(prefer("BASE-MARK")) as server:
        result = judged(pytester, server.spec())
        assert len(server.requests) == 2  # the sections did not change: no literature-review call
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*sxs_loss the change loses to main in both orders*",
        "*call with paper_1=A, paper_2=B: winner paper_2*",
        "*call with paper_1=B, paper_2=A: winner paper_1*",
        "*outcome for the change: loss*",
    ])  # fmt: skip


def grader(change_score: float, base_score: float, sxs: Responder) -> Responder:
    """Return a judge that grades the review holding CHANGE-MARK `change_score`, else `base_score`."""

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if "grade the literature review" in body["messages"][0]["content"]:
            changed = "CHANGE-MARK" in body["messages"][-1]["content"]
            return 200, json.dumps(score(overall_score=change_score if changed else base_score))
        return sxs(body)

    return respond


def test_quality_item_passes_a_win_and_runs_the_halt_rule(pytester: pytest.Pytester, repo: Path) -> None:
    (repo / "main.tex").write_text(PAPER.format(intro="We study encoders against CHANGE-MARK.", marker="x"))
    with judge_server(grader(60, 56, prefer("CHANGE-MARK"))) as server:
        result = judged(pytester, server.spec(), "-v", "--patchwrite-report", "report.json")
        assert len(server.requests) == 4
    result.assert_outcomes(passed=1)
    gates = json.loads((repo / "report.json").read_text())["manuscripts"][0]["gates"]
    assert gates["quality"]["sxs"]["outcome"] == "win" and gates["quality"]["halt"]["decision"] == "accept_improved"


def test_quality_item_fails_on_a_revert(pytester: pytest.Pytester, repo: Path) -> None:
    (repo / "main.tex").write_text(PAPER.format(intro="A shorter introduction, CHANGE-MARK.", marker="BASE-MARK"))
    tie = json.dumps({"paper_1_analysis": "", "paper_2_analysis": "", "justification": "", "winner": "tie"})
    with judge_server(grader(50, 56, lambda body: (200, tie))) as server:
        result = judged(pytester, server.spec())
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*litreview_revert revert_decreased*", "*56 at main -> 50 now: revert_decreased*"])


def test_no_quality_item_without_a_judge(pytester: pytest.Pytester, repo: Path) -> None:
    result = pytester.runpytest_subprocess("--patchwrite-base", "main", "--collect-only", "-q")
    assert "quality" not in result.stdout.str() and "diff" in result.stdout.str()


def test_fixtures(pytester: pytest.Pytester, repo: Path) -> None:
    (repo / "other.tex").write_text(PAPER.format(intro="Other.", marker="CHANGE-MARK").replace("a,b", "a"))
    pytester.makepyfile(
        test_quality="""
        def test_citation_f1(citation_f1):
            result = citation_f1("main.tex", "other.tex", {1: "P0", 2: "P1"}, {"1": "p0"})
            assert result.p0.f1 == 1.0 and result.p1.recall == 0.0 and result.overall.recall == 0.5

        def test_sxs(sxs):
            assert sxs("other.tex", "main.tex").outcome != "loss"

        def test_litreview(litreview):
            report = litreview("main.tex")
            assert report.valid and report.overall_score == 56 and report.citations["unique"] == 2
        """
    )
    with judge_server(lambda body: (200, json.dumps(score(overall_score=56))) if "grade the literature" in
                      body["messages"][0]["content"] else prefer("CHANGE-MARK")(body)) as server:  # fmt: skip
        pytester.makeini(f"[pytest]\npatchwrite_judge = {server.spec()}\npatchwrite_avg_citations = 3\n")
        result = pytester.runpytest_subprocess("-p", "no:randomly", "test_quality.py")
    result.assert_outcomes(passed=3)
    pytester.makeini("[pytest]\n")
    skipped = pytester.runpytest_subprocess("-p", "no:randomly", "test_quality.py", "-rs")
    skipped.assert_outcomes(passed=1, skipped=2)
    skipped.stdout.fnmatch_lines(["*no judge configured*"])
