"""Means and spreads over seeds (issue #27): a log table's rows that differ only in their seed are one run repeated,
and `16.8 \\pm 3.4 s (mean \\pm s.d., five seeds)` is the mean and standard deviation of one group's column. Bound by
`patchwrite bind` and checked by `patchwrite check` for real (subprocesses of this tree, `support`'s
helpers): the formula lists the group's rows, and the lock recomputes it (a changed number or a changed run is
caught). The negatives: the same numbers without words naming the mean and the seeds, and a spread that fits no
group's deviation, stay unbound.
"""

from __future__ import annotations

from pathlib import Path

from support import bind_rows as bind
from support import edit
from support import logged_paper as paper
from support import number_findings as check

# gpuadmix's shape (tests/bind_papers/gpuadmix): a method, a setting K, a seed, measured columns; a baseline
# without times; another K of the same method
RUNS = """method,K,seed,LL,time_sec
ours,5,42,-241224753.0,22.619904041290283
base,5,42,-241227642.4,
ours,5,1,-241224710.0,16.980997562408447
base,5,1,-241227643.1,
ours,5,2,-241224902.0,15.154755115509033
base,5,2,-241227642.6,
ours,5,3,-241224790.0,12.364562749862671
ours,5,7,-241224601.0,17.066509246826172
ours,4,42,-243207351.0,22.352943420410156
ours,4,1,-243365943.0,13.574470520019531
ours,4,2,-243366063.0,16.39661931991577
"""
K5 = [f"row {n} (method=ours), column time_sec" for n in (1, 3, 5, 7, 8)]


def test_a_mean_and_its_spread_over_seeds_bind_to_one_groups_column(tmp_path: Path) -> None:
    body = (
        "Ours converges in $16.8 \\pm 3.4$\\,s (mean $\\pm$ s.d., five independent seeds).\n\n"
        "The mean log-likelihood across five seeds is $-241{,}224{,}751 \\pm 98$ for ours and "
        "$-241{,}227{,}643 \\pm 0.3$ for the baseline (three seeds).\n"
    )
    root = paper(tmp_path, body, {"runs.csv": RUNS})
    rows = bind(root)
    [mean], [spread] = rows["16.8"], rows["3.4"]
    assert mean["transform"] == spread["transform"] == "derived"
    assert mean["formula"]["op"] == "mean" and [o["at"] for o in mean["formula"]["operands"]] == K5
    # five seeds' times: the population's deviation 3.36 prints 3.4, the sample's 3.75 would not
    assert spread["formula"]["op"] == "pstd" and [o["at"] for o in spread["formula"]["operands"]] == K5
    assert mean["at"] == "mean(time_sec over the seeds of row 1, row 3, row 5, row 7, row 8)"
    base = rows["-241{,}227{,}643"][0]["formula"]
    assert base["op"] == "mean"
    assert [o["at"] for o in base["operands"]] == [f"row {n} (method=base), column LL" for n in (2, 4, 6)]
    assert rows["0.3"][0]["formula"]["op"] == "pstd" and rows["98"][0]["formula"]["op"] == "pstd"
    assert check(root) == (0, [])
    edit(root, "16.8 \\pm 3.4", "16.8 \\pm 3.7")  # the spread changed by hand
    assert check(root) == (1, [("binding_mismatch", "3.7")])
    edit(root, "16.8 \\pm 3.7", "16.8 \\pm 3.4")
    edit(root.parent / "runs.csv", "12.364562749862671", "14.364562749862671")  # one seed rerun: mean 17.2
    code, found = check(root)
    assert code == 1 and {("binding_mismatch", "16.8"), ("binding_mismatch", "3.4")} <= set(found)


def test_a_mean_the_words_do_not_name_over_seeds_stays_unbound(tmp_path: Path) -> None:
    root = paper(tmp_path, "Ours converges in $16.8 \\pm 3.4$\\,s on this machine.\n", {"runs.csv": RUNS})
    rows = bind(root)
    assert "16.8" not in rows and "3.4" not in rows  # no `mean`, no `seeds`: a pair that fits is no evidence


def test_a_spread_that_fits_no_deviation_of_the_group_binds_neither_number(tmp_path: Path) -> None:
    body = "Ours converges in $16.8 \\pm 2.9$\\,s (mean $\\pm$ s.d., five seeds).\n"
    rows = bind(paper(tmp_path, body, {"runs.csv": RUNS}))
    assert "16.8" not in rows and "2.9" not in rows  # 2.9 is neither deviation (3.36, 3.75) of the group's times


def test_a_seed_rerun_logged_as_an_extreme_exponent_is_a_mismatch_and_ends(tmp_path: Path) -> None:
    # tester5 F3: a log cell `1e-999999999` made statistics.pstdev build the exact ratio 1/10**999999999: `check`
    # and `bind` never ended (the deadline cannot stop a big-integer operation); `1e999999999` must not trap either
    body = "Ours converges in $16.8 \\pm 3.4$\\,s (mean $\\pm$ s.d., five independent seeds).\n"
    root = paper(tmp_path, body, {"runs.csv": RUNS})
    assert set(bind(root)) == {"16.8", "3.4"}
    for cell in ("1e-999999999", "1e999999999"):
        edit(root.parent / "runs.csv", "12.364562749862671", cell)
        code, found = check(root)
        assert code == 1 and {("binding_mismatch", "16.8"), ("binding_mismatch", "3.4")} <= set(found), found
        edit(root.parent / "runs.csv", cell, "12.364562749862671")
