"""A bound number changed while its place moved is a `binding_mismatch`, never a stale decision and a fresh binding.

Each case is an attack on the lock: change a bound number and, in the same edit, move its line (a line inserted
above), reword its sentence, move it to another file. Before, the decision no longer paired with its number
(the pairing needed two parts of the identity, or the same line), so it went stale (a warning) and the new number
bound afresh (a warning): `check`, `apply` and `diff` all passed a changed number. The example paper and small
papers of our own with real logs; `bind`, `check`, `apply` and `diff` run as a user runs them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support import EXAMPLES, example_repository, git, rejected_edit, require_tool
from support import run_cli as cli

from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

LOCK = ("binding_mismatch", "stale_binding", "unbound_number")
OLD = "Accuracy was 91.4\\% compared with the baseline 68.2\\%~\\citep{lee2019}.\n"
#: the baseline's accuracy changed to another logged value (ours.occluded_acc), the cite dropped, a line above
NEW = "We report the main numbers first.\nAccuracy was 91.4\\% compared with the baseline 86.9\\%.\n"


def lock(root: Path) -> list[str]:
    """Return the bindings lock's findings as `check` prints them (relative to the paper's directory)."""
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    return [v.format(root.parent) for v in report.numbers or [] if v.kind in LOCK]


def bound_example(tmp_path: Path) -> Path:
    """Return a copy of the example paper, bound (8 of 8 numbers)."""
    paper = tmp_path / "paper"
    shutil.copytree(EXAMPLES / "paper", paper, ignore=shutil.ignore_patterns("*.bindings.json", "*.pdf"))
    done = cli("bind", "main.tex", cwd=paper)
    assert done.returncode == 0, done.stdout + done.stderr
    return paper


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_check_fails_a_changed_number_whose_line_moved_and_sentence_changed(tmp_path: Path) -> None:
    require_tool("pdflatex")
    paper = bound_example(tmp_path)
    replace(paper / "sections" / "results.tex", OLD, NEW)
    done = cli("check", "main.tex", "--no-cache", cwd=paper)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    head = lines.index("main.tex::numbers FAILED") + 1
    assert lines[head] == ("  sections/results.tex:4: binding_mismatch 86.9\\% is bound to results.json "
                           "baseline.clean_acc = 0.682, which prints as 68.2\\%; `patchwrite bind main.tex --update` "
                           "accepts the change")  # fmt: skip
    assert "stale_binding" not in done.stdout  # the kept 91.4 still meets its decision: nothing else to say


def test_apply_rejects_the_same_edit(tmp_path: Path) -> None:
    require_tool("pdflatex")
    paper = bound_example(tmp_path)
    said = rejected_edit(paper, "sections/results.tex", f"```EDIT 3 3\n{NEW}```\n", tmp_path)
    assert "binding_mismatch 86.9\\%" in said


def test_diff_fails_the_same_change_in_a_pull_request(tmp_path: Path) -> None:
    repo = example_repository(tmp_path / "repo", ("paper",))
    assert cli("bind", "paper/main.tex", cwd=repo).returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bindings")
    git(repo, "checkout", "-qb", "pr")
    replace(repo / "paper" / "sections" / "results.tex", OLD, NEW)
    git(repo, "commit", "-qam", "pr")
    done = cli("diff", "paper/main.tex", "--base", "main", "--no-compile", cwd=repo)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "paper/sections/results.tex:4: binding_mismatch 86.9\\% is bound to results.json baseline.clean_acc" in (
        done.stdout)  # fmt: skip


def test_a_changed_number_moved_to_another_file_meets_its_decision(tmp_path: Path) -> None:
    paper = bound_example(tmp_path)
    replace(paper / "sections" / "results.tex", OLD, "")
    intro = paper / "sections" / "intro.tex"
    intro.write_text(intro.read_text() + "\n" + OLD.replace("68.2", "86.9"))
    found = lock(paper / "main.tex")
    assert [f.split(": ", 1)[1].split()[:2] for f in found] == [["binding_mismatch", "86.9\\%"]], found
    assert found[0].startswith("sections/intro.tex:8: binding_mismatch 86.9\\% is bound to results.json baseline")


def own_paper(directory: Path, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.json").write_text(json.dumps({"ours": {"clean_acc": 0.9142, "occluded_acc": 0.869},
                                                        "baseline": {"clean_acc": 0.682}}))  # fmt: skip
    root = directory / "main.tex"
    root.write_text("% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\n"
                    f"{body}\\end{{document}}\n")  # fmt: skip
    assert cli("bind", "main.tex", cwd=directory).returncode == 0
    return root


BODY = ("We evaluate on the clean split.\nOur model reaches a clean accuracy of 91.4\\% there.\n\n"
        "The baseline reaches 68.2\\% on the same split.\n")  # fmt: skip


def test_a_sentence_reworded_with_its_number_while_lines_moved_above_is_a_mismatch(tmp_path: Path) -> None:
    root = own_paper(tmp_path, BODY)
    replace(root, "Our model reaches a clean accuracy of 91.4\\% there.",
            "A note.\n\nAnother note.\nUnder occlusion our model keeps an accuracy of 86.9\\%.")  # fmt: skip
    found = lock(root)
    assert len(found) == 1 and found[0].startswith("main.tex:8: binding_mismatch 86.9\\% is bound to results.json "
                                                   "ours.clean_acc"), found  # fmt: skip
    done = cli("bind", "main.tex", cwd=tmp_path)
    assert done.returncode == 1 and "conflict: binding_mismatch 86.9\\%" in done.stdout  # bind sees it too


def test_edits_that_keep_every_number_report_nothing(tmp_path: Path) -> None:
    # no false alarm: lines inserted above, a sentence reworded around its kept number, a sentence moved
    root = own_paper(tmp_path, BODY)
    replace(root, "We evaluate on the clean split.\n", "A first line.\n\nWe evaluate on the clean split only.\n")
    replace(root, "reaches a clean accuracy of 91.4\\% there.", "attains 91.4\\% clean accuracy.")
    assert lock(root) == []
    replace(root, "The baseline reaches 68.2\\% on the same split.\n", "")
    replace(root, "A first line.\n", "A first line.\nThe baseline reaches 68.2\\% on the same split.\n")
    assert lock(root) == []


def test_a_new_number_and_a_deleted_one_far_apart_stay_apart(tmp_path: Path) -> None:
    # a number deleted in one stretch of the file and another added beyond a kept number are no pair
    root = own_paper(tmp_path, BODY)
    replace(root, "Our model reaches a clean accuracy of 91.4\\% there.\n", "")
    replace(root, "on the same split.\n", "on the same split.\nUnder occlusion ours keeps 86.9\\% accuracy.\n")
    found = lock(root)
    assert [f.split(" ")[:3] for f in found] == [["main.tex:5:", "warning:", "stale_binding"],
                                                 ["main.tex:7:", "warning:", "unbound_number"]], found  # fmt: skip


def test_a_swap_of_two_cells_in_two_rows_with_a_line_above_is_caught_and_update_lists_it(tmp_path: Path) -> None:
    paper = bound_example(tmp_path)
    results = paper / "sections" / "results.tex"
    replace(results, "Baseline & 68.2 & 41.7", "Baseline & 91.4 & 41.7")
    replace(results, "Ours & 91.4 & 86.9", "Ours & 68.2 & 86.9")
    replace(results, "\\begin{table}[t]", "A line above the table.\n\n\\begin{table}[t]")
    found = lock(paper / "main.tex")
    assert [f.split(": ", 1)[1].split()[:2] for f in found] == [["binding_mismatch", "91.4"],
                                                                ["binding_mismatch", "68.2"]], found  # fmt: skip
    reviewed = (paper / "main.bindings.json").read_bytes()
    done = cli("bind", "main.tex", cwd=paper)
    assert done.returncode == 1 and (paper / "main.bindings.json").read_bytes() == reviewed
    assert "sections/results.tex:16: conflict: binding_mismatch 91.4 is bound to results.json baseline.clean_acc" in (
        done.stdout)  # fmt: skip
    accepted = cli("bind", "main.tex", "--update", cwd=paper)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    changes = [line for line in accepted.stdout.splitlines() if " -> " in line]
    assert [c.rsplit(" -> ", 1)[0] for c in changes] == [  # each change printed, whatever the binder now decides
        "sections/results.tex:16: 68.2 -> 91.4: results.json baseline.clean_acc",
        "sections/results.tex:17: 91.4 -> 68.2: results.json ours.clean_acc",
    ], changes
