"""An edit may not switch off the check that judges it: suppressions and configuration come from HEAD."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support import LOG, changes, edit, paper

from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates.evidence import EvidenceGate
from pytest_patchwrite.gates.headrules import carried_suppressions, settings_changes


def test_a_candidate_cannot_add_a_suppression(tmp_path: Path) -> None:
    root = paper(tmp_path, "Old 91.4\\%.\nLine two.", log=LOG)
    before = root.read_bytes()
    result = try_patch(root, "```EDIT 5 5\nLine two, 99.9\\%. % patchwrite: ignore\n```", [EvidenceGate()])
    assert (result.accepted, result.stage) == (False, "evidence")
    assert result.reason == "suppression_changed:% patchwrite: ignore"
    first = result.violations[0]
    assert (first.kind, first.line, first.severity) == ("suppression_changed", 5, "error")
    # the number it meant to hide is judged as if the comment were not there
    assert ("unattested_number", "99.9\\%") in {(v.kind, v.token) for v in result.violations}
    assert root.read_bytes() == before


def test_a_scoped_suppression_cannot_hide_a_fabricated_cite(tmp_path: Path) -> None:
    root = paper(tmp_path, "Old.\nLine two.", log=LOG)
    reply = "```EDIT 5 5\nLine two~\\cite{fake2099}. % patchwrite: ignore number cite\n```"
    result = try_patch(root, reply, [EvidenceGate()])
    kinds = {v.kind for v in result.violations}
    assert not result.accepted and {"suppression_changed", "unknown_cite"} <= kinds


def test_removing_or_rewriting_the_log_declaration_is_refused(tmp_path: Path) -> None:
    root = paper(tmp_path, "Old.\nLine two.", log=LOG)
    assert root.read_text().splitlines()[0] == "% !patchwrite log = results.json"
    before = root.read_bytes()
    rewritten = try_patch(root, "EDIT 1 1\n% !patchwrite allow = 99.9\n", [EvidenceGate()])
    assert rewritten.reason == "config_changed:% !patchwrite allow = 99.9"
    assert {v.token for v in rewritten.violations} == {
        "% !patchwrite allow = 99.9",
        "% !patchwrite log = results.json",
    }
    deleted = try_patch(root, "DELETE 1 1\n", [EvidenceGate()])
    assert deleted.reason == "config_changed:% !patchwrite log = results.json"
    assert root.read_bytes() == before


def test_head_suppressions_follow_their_lines_and_an_edit_elsewhere_passes(tmp_path: Path) -> None:
    root = paper(tmp_path, "Intro.\nKnown 55.5\\% here. % patchwrite: ignore number", log=LOG)
    # two lines where one was: the suppressed line moves from 5 to 6 and still counts
    result = try_patch(root, "```EDIT 4 4\nIntro.\nMore prose.\n```", [EvidenceGate()])
    assert result.accepted, result.violations
    assert "Known 55.5\\% here. % patchwrite: ignore number" in root.read_text().splitlines()[5]


def test_a_line_the_edit_writes_keeps_no_suppression(tmp_path: Path) -> None:
    root = paper(tmp_path, "Intro.\nKnown 55.5\\% here. % patchwrite: ignore number", log=LOG)
    reply = "```EDIT 5 5\nKnown 55.5\\% and 99.9\\% here. % patchwrite: ignore number\n```"
    result = try_patch(root, reply, [EvidenceGate()])
    assert not result.accepted
    assert ("unattested_number", "99.9\\%") in {(v.kind, v.token) for v in result.violations}
    assert "suppression_changed" not in {v.kind for v in result.violations}  # the comment itself is unchanged


def test_carried_suppressions_and_changes_directly() -> None:
    old = "a\nb % patchwrite: ignore cite\nc\n"
    new = "z\na\nb % patchwrite: ignore cite\nc % patchwrite: ignore\n"
    assert carried_suppressions(old, new) == {3: {"cite"}}
    found = settings_changes("f.tex", old, new)
    assert [(v.kind, v.line, v.token) for v in found] == [("suppression_changed", 4, "% patchwrite: ignore")]
    assert settings_changes("f.tex", old, old) == []


def test_apply_cli_reports_the_changed_setting(tmp_path: Path) -> None:
    root = paper(tmp_path, "Old.\nLine two.", log=LOG)
    reply = tmp_path / "reply.txt"
    reply.write_text("EDIT 5 5\nLine two, 99.9\\%. % patchwrite: ignore\n")
    done = subprocess.run(
        ["python3", "-m", "pytest_patchwrite.cli", "apply", str(root), str(reply), "--json", "--no-compile-gate"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout)
    assert (out["stage"], out["violations"][0]["kind"]) == ("evidence", "suppression_changed")


def test_diff_lists_an_added_suppression_as_a_warning_and_judges_with_the_base(repo: Path) -> None:
    results = repo / "paper" / "sections" / "results.tex"
    edit(results, "68.2\\%~\\citep{lee2019}.", "99.9\\%~\\citep{lee2019}. % patchwrite: ignore")
    _, failures, report = changes(repo)
    assert any("sections/results.tex:3: warning: suppression_changed" in f for f in failures), failures
    assert any("unattested_number 99.9" in f for f in failures), failures
    assert not report.result().ok


def test_diff_passes_a_clean_line_given_a_suppression_with_a_warning(repo: Path) -> None:
    results = repo / "paper" / "sections" / "results.tex"
    edit(results, "over 3 seeds.", "over 3 seeds. % patchwrite: ignore")
    _, failures, report = changes(repo)
    assert failures == [f for f in failures if "warning: suppression_changed" in f] and failures
    assert report.result().ok


def test_diff_judges_with_the_base_log_when_the_change_drops_it(repo: Path) -> None:
    main = repo / "paper" / "main.tex"
    edit(main, "% !patchwrite log = results.json\n", "")
    edit(repo / "paper" / "sections" / "results.tex", "Accuracy was 91.4", "Accuracy was 99.9")
    _, failures, report = changes(repo)
    assert any("warning: config_changed" in f for f in failures), failures
    assert any("unattested_number 99.9" in f for f in failures), failures
    assert not report.result().ok
