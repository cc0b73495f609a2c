"""Derived numbers a person recognises (issue #27): one small paper of our own per class, bound by `patchwrite bind`
and then checked by `patchwrite check` for real (subprocesses of this tree), each with its formula recorded in the
bindings file and recomputed by the lock: a changed derived number and a changed operand in the log are caught.
And the arithmetic that fits by chance (class 6 of the issue) stays unbound.

Classes: a relative drop in prose (`a relative drop of 24.1\\%`), a share of two counts (`312 of 2,010 ... 15.5\\%`),
a speedup column against its reference row (`1.00x`), a gap column against the baseline row (`0.000`), a
difference column of two cells of each row; and the negatives: a change between two different quantities, and a
sentence of so many bound numbers that some pair fits by arithmetic alone, and a caption's `best` read as the `max`
of a confidence interval.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support import bind_rows as bind
from support import edit
from support import logged_paper as paper
from support import number_findings as check

REPO = Path(__file__).resolve().parent.parent


def patchwrite(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "pytest_patchwrite.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def derived(rows: dict[str, list[dict[str, Any]]], token: str) -> tuple[str, list[str]]:
    """Return the op and the operand locators of the one derived binding of a token."""
    [row] = rows[token]
    assert row["transform"] == "derived", row
    return row["formula"]["op"], [o["at"] for o in row["formula"]["operands"]]


def test_a_relative_drop_binds_and_the_lock_catches_a_changed_number_and_a_changed_operand(tmp_path: Path) -> None:
    logs = {"results.json": {"before": {"alignment": 0.4637}, "after": {"alignment": 0.3518}}}
    body = "The alignment score falls from 0.464 before training to 0.352 after it, a relative drop of 24.1\\%.\n"
    root = paper(tmp_path, body, logs)
    rows = bind(root)
    assert derived(rows, "24.1\\%") == ("relative_decrease", ["after.alignment", "before.alignment"])
    assert rows["24.1\\%"][0]["at"] == "(before.alignment - after.alignment) / before.alignment * 100"
    assert check(root) == (0, [])
    edit(root, "24.1\\%", "26.1\\%")  # the derived number changed by hand
    assert check(root) == (1, [("binding_mismatch", "26.1\\%")])
    edit(root, "26.1\\%", "24.1\\%")
    edit(root.parent / "results.json", "0.3518", "0.3618")  # an operand changed in the log: 0.352 still prints
    code, found = check(root)
    assert code == 1 and ("binding_mismatch", "24.1\\%") in found  # (0.4637 - 0.3618) / 0.4637 = 22.0%


def test_a_share_of_two_counts_binds_as_a_percentage_of_them(tmp_path: Path) -> None:
    logs = {"corpus.json": {"notes": {"n_flagged": 312, "n_total": 2010}}}
    body = "Of the 2{,}010 notes in the corpus, 312 are flagged, a share of 15.5\\% of all notes.\n"
    root = paper(tmp_path, body, logs)
    rows = bind(root)
    assert derived(rows, "15.5\\%") == ("ratio", ["notes.n_flagged", "notes.n_total"])
    assert rows["15.5\\%"][0]["formula"]["power"] == 2
    assert check(root) == (0, [])
    edit(root.parent / "corpus.json", "312", "302")
    code, found = check(root)
    assert code == 1 and ("binding_mismatch", "15.5\\%") in found


SPEEDUP = r"""\begin{table}
\caption{Wall time of each mode.}
\begin{tabular}{lrrr}
Mode & Wall (s) & Throughput & Speedup \\
Full & 2024.2 & 12.14 & --- \\
Rolling A & 1297.6 & 18.94 & 1.56$\times$ \\
Rolling B & 1225.8 & 20.05 & 1.65$\times$ \\
Rolling C & 1246.6 & 19.71 & 1.62$\times$ \\
\end{tabular}
\end{table}
"""
SPEEDUP_CSV = """mode,wall_seconds,throughput
full,2024.24,12.14
rolling_a,1297.60,18.94
rolling_b,1225.80,20.05
rolling_c,1246.57,19.71
"""


def test_a_speedup_column_binds_as_the_reference_rows_time_over_each_rows_time(tmp_path: Path) -> None:
    root = paper(tmp_path, SPEEDUP, {"modes.csv": SPEEDUP_CSV})
    rows = bind(root)
    # the throughput's ratio fits too (18.94 / 12.14 = 1.56): a speedup is a ratio of times, the wall column's
    assert derived(rows, "1.56") == ("ratio", ["row 1 (mode=full), column wall_seconds",
                                               "row 2 (mode=rolling_a), column wall_seconds"])  # fmt: skip
    assert derived(rows, "1.62")[1][1] == "row 4 (mode=rolling_c), column wall_seconds"
    assert check(root) == (0, [])
    edit(root, "1.65$", "1.69$")
    assert check(root) == (1, [("binding_mismatch", "1.69")])
    edit(root, "1.69$", "1.65$")
    edit(root.parent / "modes.csv", "2024.24", "2104.24")  # the reference row's time: 2024.2 prints no more
    code, found = check(root)
    assert code == 1 and {("binding_mismatch", t) for t in ("1.56", "1.65", "1.62")} <= set(found)


GAP = r"""\begin{table}
\caption{Recovery. Gap is the deficit relative to the clean baseline.}
\begin{tabular}{lccc}
Condition & Align. & Tox. & Gap \\
Baseline & 0.464 & 0.001 & 0.000 \\
Toxic low & 0.443 & 0.100 & 0.021 \\
Toxic mid & 0.352 & 0.377 & 0.112 \\
Toxic high & 0.359 & 0.907 & 0.105 \\
\end{tabular}
\end{table}
"""
GAP_LOG = {"baseline": {"align": 0.4637, "tox": 0.0012},
           "toxic_50": {"align": 0.4434, "tox": 0.1003}, "toxic_75": {"align": 0.3518, "tox": 0.3771},
           "toxic_100": {"align": 0.3593, "tox": 0.9071}}  # fmt: skip


def test_a_gap_column_binds_as_the_baseline_rows_cell_minus_each_rows_cell(tmp_path: Path) -> None:
    root = paper(tmp_path, GAP, {"recovery.json": GAP_LOG})
    rows = bind(root)
    assert derived(rows, "0.021") == ("difference", ["baseline.align", "toxic_50.align"])
    assert derived(rows, "0.105") == ("difference", ["baseline.align", "toxic_100.align"])
    assert "0.000" not in rows  # the baseline's gap to itself is a definition, not a result: typed by hand
    assert check(root) == (1, [("unattested_number", "0.000")])
    done = patchwrite("bind", root.name, "--manual", "unattested", "--reason", "definition", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert check(root) == (0, [])
    edit(root.parent / "recovery.json", "0.3518", "0.3618")  # 0.352 still prints; 0.4637 - 0.3618 is 0.102
    code, found = check(root)
    assert code == 1 and ("binding_mismatch", "0.112") in found


DELTA = r"""\begin{table}
\caption{Accuracy before and after fine-tuning.}
\begin{tabular}{lccc}
Task & Before & After & Gain \\
Parsing & 71.3 & 78.9 & 7.6 \\
Tagging & 88.2 & 91.5 & 3.3 \\
Linking & 64.0 & 70.4 & 6.4 \\
\end{tabular}
\end{table}
"""
DELTA_CSV = "task,before,after\nparsing,71.32,78.94\ntagging,88.21,91.47\nlinking,64.03,70.41\n"


def test_a_delta_column_binds_as_the_difference_of_two_cells_of_each_row(tmp_path: Path) -> None:
    root = paper(tmp_path, DELTA, {"tasks.csv": DELTA_CSV})
    rows = bind(root)
    assert derived(rows, "7.6") == ("difference", ["row 1 (task=parsing), column after",
                                                   "row 1 (task=parsing), column before"])  # fmt: skip
    assert derived(rows, "6.4")[0] == "difference"
    assert check(root) == (0, [])
    edit(root, "& 3.3 \\\\", "& 3.4 \\\\")
    assert check(root) == (1, [("binding_mismatch", "3.4")])


# --- arithmetic that fits by chance (class 6) ------------------------------------------------------------------------


def test_a_change_between_two_different_quantities_stays_unbound(tmp_path: Path) -> None:
    logs = {"probe.json": {"probe": {"threshold_tau": 41.12, "key_count": 33.0}}}
    body = "The threshold tau is 41.12 and the key count 33.00; recall is 24.6\\% higher than before.\n"
    rows = bind(paper(tmp_path, body, logs))
    assert rows["41.12"][0]["at"] == "probe.threshold_tau" and rows["33.00"][0]["at"] == "probe.key_count"
    assert "24.6\\%" not in rows  # (41.12 - 33) / 33 = 24.6%, but a threshold is not compared with a count


def test_a_change_that_fits_one_of_many_pairs_stays_unbound(tmp_path: Path) -> None:
    scores = [0.912, 0.871, 0.834, 0.902, 0.755, 0.688, 0.931, 0.796, 0.641, 0.723]
    logs = {"runs.json": {f"run_{i}": {"score": s} for i, s in enumerate(scores)}}
    listed = ", ".join(f"{s:.3f}" for s in scores)
    body = f"The ten runs score {listed}: the best improves on the worst by 45.2\\%.\n"
    rows = bind(paper(tmp_path, body, logs))
    assert all(rows[f"{s:.3f}"][0]["at"] == f"run_{i}.score" for i, s in enumerate(scores))
    # (0.931 - 0.641) / 0.641 is 45.2%, but the 90 pairs' relative changes print as 28 distinct numbers of the form
    # 10.0 .. 99.9: a number of that form fits one with a chance of 3%, above the bound (1%): abstain
    assert "45.2\\%" not in rows


def test_a_captions_best_does_not_make_a_confidence_bound_a_max(tmp_path: Path) -> None:
    table = r"""\begin{table}
\caption{Ablations; the best setting of each group in bold.}
\begin{tabular}{lcc}
Group & Setting & Brier \\
Batch & 4 games/step & 0.149 \\
Batch & 8 games/step & 0.162 \\
\end{tabular}
\end{table}
"""
    logs = {"results.json": {"models": {"ws1": {"brier_ci": [0.1311, 0.1493], "n_plays": 5120}}}}
    rows = bind(paper(tmp_path, table, logs))
    # max(models.ws1.brier_ci[*]) is 0.1493, but `best` is the caption's word, not the cell's: an interval's upper
    # end is no maximum the text names (on main it bound as `max`)
    assert "0.149" not in rows
