"""Every number of a bound paper locked to a reviewed decision: the last tester's bypasses and false alarms.

N1: a count whose words name two entries alike had no decision and no finding, and `--manual unattested` skipped
it. N3: a table row moved past another row of the same label met that row's decisions. N4: a mismatch of a number
whose minus stands apart showed it unsigned. N5: a fresh `bind` recorded a swap already in the paper. N7: rows
relabelled instead of renumbered. Small papers of our own with real logs; `bind` through the CLI, the lock's
findings as `check` makes them.
"""

from __future__ import annotations

import json
from pathlib import Path

from support import logged_paper as paper
from support import run_cli as cli

from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

RESULTS = {"ours": {"clean_acc": 0.9142, "noisy_acc": 0.869, "n_documents": 500},
           "baseline": {"clean_acc": 0.682, "noisy_acc": 0.601, "n_documents": 500}}  # fmt: skip
PROSE = "Accuracy was 91.4\\% compared with the baseline 68.2\\%.\n"


def findings(root: Path) -> list[str]:
    """Return the number lock's findings as `check` prints them (relative to the paper's directory)."""
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    return [v.format(root.parent) for v in report.numbers or []]


def bindings(root: Path) -> list[dict]:
    return json.loads((root.parent / "main.bindings.json").read_text())["bindings"]


def edit(root: Path, old: str, new: str) -> None:
    text = root.read_text()
    assert old in text, old
    root.write_text(text.replace(old, new))


def test_a_count_fitting_two_entries_alike_is_listed_recorded_by_adoption_and_then_locked(tmp_path: Path) -> None:
    # N1: `500` names n_documents of two records alike; it was quiet (no finding), `--manual unattested` skipped
    # it, the summary said "3 of 3 decided", and 500 -> 600 passed every check after the adoption
    root = paper(tmp_path, PROSE + "Both were evaluated on 500 documents.\nWe use a margin of 1.5 here.\n",
                 {"results.json": RESULTS})  # fmt: skip
    fresh = cli("bind", "main.tex", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert ("main.tex:5: warning: ambiguous_binding 500 not bound: fits results.json ours.n_documents, results.json "
            "baseline.n_documents alike") in fresh.stdout.splitlines()  # fmt: skip
    assert "2 of 4 number(s) decided" in fresh.stdout and "2 without a decision" in fresh.stdout
    (listed,) = [f for f in findings(root) if ":5:" in f]
    assert listed.startswith("main.tex:5: unattested_number 500 fits several entries alike (results.json "
                             "ours.n_documents, results.json baseline.n_documents)")  # fmt: skip
    adopted = cli("bind", "main.tex", "--manual", "unattested", "--reason", "not_logged", cwd=tmp_path)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    assert ("main.tex:5: 500: no decision -> typed by hand (not_logged, fitting results.json ours.n_documents, "
            "results.json baseline.n_documents alike)") in adopted.stdout.splitlines()  # fmt: skip
    assert "4 of 4 number(s) decided (2 typed by hand" in adopted.stdout
    (row,) = [r for r in bindings(root) if r["token"] == "500"]
    assert (row["transform"], row["value"], row["reason"]) == ("manual", "500", "not_logged")
    assert [a["at"] for a in row["alternatives"]] == ["ours.n_documents", "baseline.n_documents"]
    assert findings(root) == []
    assert cli("bind", "main.tex", "--check", cwd=tmp_path).returncode == 0
    edit(root, "on 500 documents", "on 600 documents")
    assert findings(root) == ["main.tex:5: binding_mismatch 600 is recorded as typed by hand: 500 (not_logged); "
                              "`patchwrite bind main.tex --update` accepts the change"]  # fmt: skip


def test_a_count_naming_no_entry_stays_quiet_under_decimals(tmp_path: Path) -> None:
    # the other side of N1: a count with no evidence for any entry is no empirical number under `decimals`
    root = paper(tmp_path, PROSE + "We ran 300 epochs on 8 GPUs.\n", {"results.json": RESULTS})
    done = cli("bind", "main.tex", "--manual", "unattested", "--reason", "not_logged", cwd=tmp_path)
    assert done.returncode == 0 and "2 of 2 number(s) decided" in done.stdout, done.stdout
    assert findings(root) == [] and [r["token"] for r in bindings(root)] == ["91.4\\%", "68.2\\%"]


TABLE = r"""\begin{table}
\caption{Accuracy (\%) per model.}\label{tab:main}
\begin{tabular}{lcc}
Model & Clean & Noisy \\
ResNet & 91.4 & 86.9 \\
ViT & 93.2 & 88.1 \\
ResNet & 75.2 & 60.1 \\
\end{tabular}
\end{table}
"""
RUNS = "model,clean,noisy\nResNet,0.914,0.869\nViT,0.932,0.881\nResNet,0.752,0.601\n"


def test_a_moved_row_whose_label_repeats_keeps_its_decisions_and_a_traded_cell_is_still_caught(
    tmp_path: Path,
) -> None:
    # N3: two rows labelled ResNet; the first moved below the second met the second's decisions in reading order
    root = paper(tmp_path, TABLE, {"runs.csv": RUNS})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    assert len(bindings(root)) == 6 and findings(root) == []
    reviewed = root.read_text()
    edit(root, "ResNet & 91.4 & 86.9 \\\\\nViT & 93.2 & 88.1 \\\\\nResNet & 75.2 & 60.1 \\\\\n",
         "ViT & 93.2 & 88.1 \\\\\nResNet & 75.2 & 60.1 \\\\\nResNet & 91.4 & 86.9 \\\\\n")  # fmt: skip
    assert findings(root) == []
    assert cli("bind", "main.tex", "--check", cwd=tmp_path).returncode == 0  # bind agrees: nothing to change
    # two cells traded between the rows of one label (the rest of each row kept) are no move: both caught
    root.write_text(reviewed.replace("ResNet & 91.4 & 86.9", "ResNet & 75.2 & 86.9").replace(
        "ResNet & 75.2 & 60.1", "ResNet & 91.4 & 60.1"))  # fmt: skip
    assert [f.split(" is bound")[0] for f in findings(root)] == ["main.tex:8: binding_mismatch 75.2",
                                                                 "main.tex:10: binding_mismatch 91.4"]  # fmt: skip


def test_a_mismatch_shows_the_sign_its_minus_gives_it(tmp_path: Path) -> None:
    # N4: `$-$91.4` is read as -91.4 and compared so; the finding showed `91.4`, the value it is not
    logs = {"results.json": {"ours": {"gain": 91.4, "clean_acc": 0.9142}}}
    root = paper(tmp_path, "Our accuracy was 91.4\\% and our gain 91.4 points.\n", logs)
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    edit(root, "gain 91.4 points", "gain $-$91.4 points")
    assert findings(root) == ["main.tex:4: binding_mismatch 91.4 (read as -91.4: its minus stands apart) is bound "
                              "to results.json ours.gain = 91.4, which prints as 91.4; `patchwrite bind main.tex "
                              "--update` accepts the change"]  # fmt: skip


def test_a_fresh_bind_binds_no_swap_already_in_the_paper(tmp_path: Path) -> None:
    # N5: each number's words name the other's entry: a fresh bind recorded the swap, and every check passed it
    swapped = "Accuracy was 68.2\\% for ours, compared with the baseline at 91.4\\%.\n"
    root = paper(tmp_path / "swapped", swapped, {"results.json": RESULTS})
    done = cli("bind", "main.tex", cwd=root.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert bindings(root) == []
    assert (
        "main.tex:4: warning: unattested_number 68.2\\% prints results.json baseline.clean_acc = 0.682, but its "
        "words name results.json ours.clean_acc, which prints as 91.4\\% and stands at line 4 (91.4\\%), whose "
        "words name this one's entry: the two look swapped, so neither is bound"
    ) in done.stdout.splitlines()
    found = findings(root)
    assert [f.split(" prints ")[0] for f in found] == ["main.tex:4: unattested_number 68.2\\%",
                                                       "main.tex:4: unattested_number 91.4\\%"]  # fmt: skip
    assert all("the two look swapped" in f for f in found)
    # the same sentence as it should read binds both
    right = paper(tmp_path / "right", "Accuracy was 91.4\\% for ours, compared with the baseline at 68.2\\%.\n",
                  {"results.json": RESULTS})  # fmt: skip
    assert cli("bind", "main.tex", cwd=right.parent).returncode == 0
    assert [(r["token"], r["at"]) for r in bindings(right)] == [("91.4\\%", "ours.clean_acc"),
                                                                ("68.2\\%", "baseline.clean_acc")]  # fmt: skip
    assert findings(right) == []


ROWS = r"""\begin{table}
\caption{Accuracy (\%) per model.}\label{tab:main}
\begin{tabular}{lcc}
Model & Clean & Noisy \\
Ours & 91.4 & 86.9 \\
Baseline & 68.2 & 60.1 \\
\end{tabular}
\end{table}
"""


def test_rows_relabelled_instead_of_renumbered(tmp_path: Path) -> None:
    # N7: trading the two rows' labels (numbers kept) claims each row's results for the other: each cell meets the
    # decision of its label, so all four are mismatches; a label renamed to a name no other row holds keeps them
    root = paper(tmp_path, ROWS, {"results.json": RESULTS})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    reviewed = root.read_text()
    root.write_text(reviewed.replace("Ours & 91.4", "Baseline & 91.4").replace("Baseline & 68.2", "Ours & 68.2"))
    found = findings(root)
    assert [f.split(" is bound to ")[1].split(",")[0] for f in found] == [
        "results.json baseline.clean_acc = 0.682", "results.json baseline.noisy_acc = 0.601",
        "results.json ours.clean_acc = 0.9142", "results.json ours.noisy_acc = 0.869"]  # fmt: skip
    assert all(" binding_mismatch " in f for f in found)
    root.write_text(reviewed.replace("Ours & 91.4", "Ours (ours) & 91.4"))
    assert findings(root) == []
