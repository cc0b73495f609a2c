"""Gating a change: what it moved against a base revision, in a real git repository."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import changes, edit, git, require_tool

from pytest_patchwrite.flows.prdiff import BaseError, GitBase, _diff_file, diff_manuscript
from pytest_patchwrite.gates.evidence import EvidenceConfig, EvidenceReport
from pytest_patchwrite.tex.texcites import cite_commands


def test_section_rewrite_moving_12_to_16_is_reported(repo: Path) -> None:
    intro = repo / "paper" / "sections" / "intro.tex"
    intro.write_text(
        "\\section{Introduction}\n\\label{sec:intro}\n"
        "Local corruptions hurt vision encoders, as \\citet{smith2020} showed~\\citep{smith2020}.\n"
        "Our encoder uses 16 layers and a frozen tokenizer. Section~\\ref{sec:results} reports accuracy;\n"
        "\\citet{garcia2021} survey patch-level attacks.\n"
    )
    moved, failures, report = changes(repo)
    assert "paper/sections/intro.tex:4: number 12 -> 16 (not attested by results.json)" in moved
    assert failures == []  # 16 is an integer: the decimals policy does not lock it, the diff still shows it
    assert report.numeric_jaccard < 1.0 and report.cite_jaccard == 1.0  # type: ignore[attr-defined]


def test_added_unattested_number_fails(repo: Path) -> None:
    edit(repo / "paper" / "sections" / "results.tex", "Ours & 91.4 & 86.9", "Ours & 91.4 & 88.8")
    moved, failures, _ = changes(repo)
    assert moved == ["paper/sections/results.tex:15: number 86.9 -> 88.8 (not attested by results.json)"]
    assert [f.split(": ")[0] + ": " + f.split(": ")[1].split(" ")[0] for f in failures] == [
        "paper/sections/results.tex:15: unattested_number"
    ]


def test_prose_only_change_passes(repo: Path) -> None:
    edit(repo / "paper" / "sections" / "intro.tex", "Vision encoders are sensitive", "Vision encoders are fragile")
    moved, failures, report = changes(repo)
    assert (moved, failures) == ([], [])
    assert (report.numeric_jaccard, report.cite_jaccard) == (1.0, 1.0)  # type: ignore[attr-defined]


def test_existing_violation_on_an_untouched_line_does_not_fail_the_change(repo: Path) -> None:
    edit(repo / "paper" / "sections" / "results.tex", "Baseline & 68.2 & 41.7", "Baseline & 68.2 & 40.0")
    git(repo, "commit", "-qam", "an unattested number lands on main")
    edit(repo / "paper" / "sections" / "intro.tex", "sensitive", "fragile")
    assert changes(repo, "HEAD")[1] == []


def test_an_undefined_reference_the_engine_reports_on_a_changed_line_fails(repo: Path) -> None:
    require_tool("pdflatex")
    from pytest_patchwrite.gates.compile import CompileGate

    intro = repo / "paper" / "sections" / "intro.tex"
    wrapper = "\\newcommand{\\secref}[1]{Section~\\ref{#1}}\n"
    edit(repo / "paper" / "main.tex", "\\begin{document}", wrapper + "\\begin{document}")
    git(repo, "commit", "-qam", "a wrapper of \\ref")
    edit(intro, "Vision encoders are sensitive", "As \\secref{sec:nowhere} shows, vision encoders are sensitive")
    root = repo / "paper" / "main.tex"
    compiled = CompileGate(root, use_cache=False).compile(root)
    report = diff_manuscript(root, GitBase.open(repo / "paper", "main"), EvidenceConfig(), None, None, compiled)
    assert [(f.kind, f.token, Path(f.file).name) for f in report.failures] == [
        ("undefined_reference", "sec:nowhere", "intro.tex")
    ]
    assert changes(repo)[1] == []  # without the compile, the scanner cannot see through \secref


@pytest.mark.parametrize("mode", ["head", "base"])
def test_evidence_the_change_wrote_itself_is_said_so(repo: Path, mode: str) -> None:
    paper = repo / "paper"
    edit(paper / "sections" / "results.tex", "Ours & 91.4 & 86.9", "Ours & 91.4 & 88.8")
    edit(paper / "results.json", '"occluded_acc": 0.869}', '"occluded_acc": 0.869, "rerun": 0.888}')
    edit(paper / "sections" / "results.tex", "Accuracy was", "As \\citet{new2024} found, accuracy was")
    (paper / "refs.bib").write_text((paper / "refs.bib").read_text() + "@article{new2024, author={N}, title={T}, "
                                    "journal={J}, year={2024}}\n")  # fmt: skip
    root = paper / "main.tex"
    report = diff_manuscript(root, GitBase.open(paper, "main"), EvidenceConfig(), evidence_from=mode)
    notes = [(f.kind, f.token, f.line, f.severity) for f in report.failures if f.kind == "attested_by_change"]
    severity = "warning" if mode == "head" else "error"
    assert notes == [("attested_by_change", "new2024", 3, severity), ("attested_by_change", "88.8", 15, severity)]
    messages = [f.message for f in report.failures if f.kind == "attested_by_change"]
    assert "refs.bib:" in messages[0] and "results.json:5, a value this change added" in messages[1]
    assert report.result().ok is (mode == "head")
    # a value the base's log already held is the base's evidence
    edit(paper / "sections" / "results.tex", "Ours & 91.4 & 88.8", "Ours & 91.4 & 86.9")
    again = diff_manuscript(root, GitBase.open(paper, "main"), EvidenceConfig(), evidence_from=mode)
    assert [f.token for f in again.failures if f.kind == "attested_by_change"] == ["new2024"]


@pytest.mark.parametrize("mode", ["head", "base"])
def test_a_bibitem_the_change_wrote_is_its_own_evidence(repo: Path, mode: str) -> None:
    """tester3 P1: a made-up key defined by a `\\bibitem` the change added passed `diff --evidence-from base`."""
    paper = repo / "paper"
    edit(paper / "sections" / "results.tex", "\\citep{lee2019}", "\\citep{fake2024}")
    item = "\\begin{thebibliography}{9}\\bibitem[Fake(2024)]{fake2024} Fake, A. Nothing.\\end{thebibliography}\n"
    edit(paper / "main.tex", "\\end{document}", item + "\\end{document}")
    report = diff_manuscript(paper / "main.tex", GitBase.open(paper, "main"), EvidenceConfig(), evidence_from=mode)
    [note] = [f for f in report.failures if f.kind == "attested_by_change"]
    assert (note.token, note.line, note.severity) == ("fake2024", 3, "warning" if mode == "head" else "error")
    assert "main.tex:" in note.message and "a \\bibitem this change added" in note.message
    assert report.result().ok is (mode == "head")
    # a \bibitem the base already had is the base's evidence
    git(repo, "commit", "-qam", "the bibitem lands")
    edit(paper / "sections" / "results.tex", "Accuracy was", "As \\citet{fake2024} found, accuracy was")
    again = diff_manuscript(paper / "main.tex", GitBase.open(paper, "main"), EvidenceConfig(), evidence_from=mode)
    assert [f for f in again.failures if f.kind == "attested_by_change"] == []


@pytest.mark.parametrize("mode", ["head", "base"])
def test_a_rewritten_bib_entry_of_a_cited_key_is_listed(repo: Path, mode: str) -> None:
    """tester3 P2: a PR that rewrote the `.bib` entry behind a cited key passed `diff --evidence-from base` unlisted."""
    paper = repo / "paper"
    edit(paper / "refs.bib", "{Lee, Min}", "{Nobody, X.}")
    edit(paper / "refs.bib", "{Baselines for Occlusion Robustness}", "{A Completely Different Paper}")
    report = diff_manuscript(paper / "main.tex", GitBase.open(paper, "main"), EvidenceConfig(), evidence_from=mode)
    [note] = [f for f in report.failures if f.kind == "bib_changed"]
    assert (Path(note.file).name, note.line, note.token) == ("refs.bib", 10, "lee2019")
    assert "(author, title changed)" in note.message
    assert note.severity == ("warning" if mode == "head" else "error")
    assert report.result().ok is (mode == "head")
    # a field of an entry nobody cites, or only the entry's layout, is no change of a citation
    git(repo, "commit", "-qam", "the rewrite lands")
    text = (paper / "refs.bib").read_text()
    relaid = text.replace("  author    = {Nobody, X.}", "  author = {Nobody,   X.}")
    assert relaid != text
    (paper / "refs.bib").write_text(relaid)
    again = diff_manuscript(paper / "main.tex", GitBase.open(paper, "main"), EvidenceConfig(), evidence_from=mode)
    assert [f for f in again.failures if f.kind == "bib_changed"] == []


def test_hunk_bound(repo: Path) -> None:
    intro = repo / "paper" / "sections" / "intro.tex"
    intro.write_text("\n".join(f"Line {chr(65 + i)} of a rewritten intro." for i in range(6)) + "\n")
    _, failures, _ = changes(repo, max_hunk=3)
    assert any("hunk_too_long" in f and "at most 3 allowed" in f for f in failures)
    assert not any("hunk_too_long" in f for f in changes(repo, max_hunk=10)[1])


def test_missing_base_and_shallow_clone(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    with pytest.raises(BaseError, match="base revision not found; check the name"):
        GitBase.open(repo / "paper", "origin/nope")
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    clone = tmp_path_factory.mktemp("shallow") / "c"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)], check=True)
    with pytest.raises(BaseError, match="shallow clone"):
        GitBase.open(clone / "paper", "HEAD~1")
    with pytest.raises(BaseError, match="not inside a git repository"):
        GitBase.open(tmp_path_factory.mktemp("nogit"), "main")


def test_new_manuscript_is_checked_as_a_whole(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    shutil.copytree(repo / "paper", repo / "paper2")
    report = diff_manuscript(repo / "paper2" / "main.tex", GitBase.open(repo, "main"), EvidenceConfig())
    assert report.new_manuscript
    kinds = {c.kind for c in report.changes}
    assert kinds == {"added_number", "added_cite"}
    assert "number 91.4\\% added (attested by results.json)" in [c.message for c in report.changes]


def test_renamed_input_compares_with_its_old_name(repo: Path) -> None:
    git(repo, "mv", "paper/sections/intro.tex", "paper/sections/introduction.tex")
    edit(repo / "paper" / "main.tex", "\\input{sections/intro}", "\\input{sections/introduction}")
    moved, failures, _ = changes(repo)
    assert (moved, failures) == ([], [])


def test_diff_cli(repo: Path) -> None:
    edit(repo / "paper" / "sections" / "intro.tex", "12 layers", "16 layers")
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", "diff", "paper/main.tex", "--base", "main"]
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "paper/sections/intro.tex:4: number 12 -> 16 (not attested by results.json)" in proc.stdout
    out = json.loads(subprocess.run([*cmd, "--json"], cwd=repo, capture_output=True, text=True).stdout)
    # the example prints 8 distinct numbers; moving one leaves 7 shared of 9
    assert out["ok"] is True and out["numeric_jaccard"] == round(7 / 9, 4)
    assert [c["kind"] for c in out["changes"]] == ["moved_number"]
    proc = subprocess.run([*cmd[:-1], "nope"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 2 and "nope: base revision not found" in proc.stderr


def test_diff_item_and_annotations_in_pytest(repo: Path, pytester: pytest.Pytester) -> None:
    require_tool("pdflatex")
    edit(repo / "paper" / "sections" / "results.tex", "Ours & 91.4 & 86.9", "Ours & 91.4 & 88.8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "paper", "--patchwrite-base", "main", "--patchwrite-annotations",
         "-p", "no:cacheprovider", "--patchwrite-report", "report.json"],
        cwd=repo, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "paper/main.tex::diff" in proc.stdout or "main.tex::diff" in proc.stdout
    assert "  paper/sections/results.tex:15: number 86.9 -> 88.8 (not attested by results.json)" in proc.stdout
    annotations = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    assert annotations == [
        "::error file=paper/sections/results.tex,line=15::unattested_number 88.8 is not attested (policy: decimals; "
        "logs: results.json); add it to a log or mark the line `%25 patchwrite: ignore number`"
    ]
    report = json.loads((repo / "report.json").read_text())
    diff = report["manuscripts"][0]["gates"]["diff"]
    assert diff["ok"] is False and diff["changes"][0]["kind"] == "moved_number"


def test_one_file_is_compared_hunk_by_hunk_without_a_repository() -> None:
    """What a change did to one file: its moves, a hunk over the limit, the lines it touched, the tokens on either
    side and the values of the numbers it prints."""
    old = "A 12 layers \\cite{a}.\nB.\nC.\n"
    new = "A 16 layers \\cite{b}.\nB.\nC.\nD 3.5 and E.\nF.\n"
    no_log = EvidenceReport([], None, [], [], [], 0)
    diff = _diff_file(Path("p/main.tex"), old, new, cite_commands([old, new]), no_log, 1, False)
    assert [(c.kind, c.line, c.message) for c in diff.changes] == [
        ("moved_number", 1, "number 12 -> 16 (no experimental log declared)"),
        ("moved_cite", 1, "cite a -> b"),
        ("added_number", 4, "number 3.5 added (no experimental log declared)"),
    ]
    assert [(f.kind, f.line, f.message) for f in diff.failures] == [
        ("hunk_too_long", 4, "a hunk of 2 lines (lines 4-5); at most 1 allowed")
    ]
    assert diff.changed_lines == {1, 4, 5}
    assert sorted(diff.old_tokens) == [("cite", "a"), ("number", "12")]
    assert sorted(diff.new_tokens) == [("cite", "b"), ("number", "16"), ("number", "3.5")]
    assert sorted(diff.values) == [("p/main.tex", 1, "16"), ("p/main.tex", 4, "3.5")]
