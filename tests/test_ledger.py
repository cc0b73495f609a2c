"""The ledger: a decision for every number the author accepts, nothing changed without --update, places that survive.

Small papers of our own with real logs; `bind` and `check` run as a user runs them (the CLI in a subprocess
where exit codes and printed lines are the contract, the gate in-process for the findings).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import logged_paper as paper
from support import require_tool
from support import run_cli as cli

from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

RESULTS = {"baseline": {"clean_acc": 0.682}, "ours": {"clean_acc": 0.9142}}
PROSE = "Accuracy was 91.4\\% compared with the baseline 68.2\\%.\n"
LOCK = ("binding_mismatch", "stale_binding", "unbound_number")


def findings(root: Path) -> list[str]:
    """Return the number lock's findings as `check` prints them (relative to the paper's directory)."""
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    return [v.format(root.parent) for v in report.numbers or []]


def lock_findings(root: Path) -> list[str]:
    """Return the bindings lock's findings, errors and warnings (`stale_binding` and `unbound_number` are warnings)."""
    return [f for f in findings(root) if f.split(": ", 1)[1].removeprefix("warning: ").split()[0] in LOCK]


def bindings(root: Path) -> list[dict]:
    return json.loads((root.parent / "main.bindings.json").read_text())["bindings"]


def test_a_swap_is_a_conflict_until_update_accepts_it(tmp_path: Path) -> None:
    # words that name neither record: `68.2\\% compared with the baseline 91.4\\%` leaves 91.4 unbound (the baseline's
    # number is no `ours` entry), so that swap is no rebinding of both
    root = paper(tmp_path, "Accuracy was 91.4\\% and then 68.2\\% in the two runs.\n", {"results.json": RESULTS})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    reviewed = (tmp_path / "main.bindings.json").read_bytes()
    root.write_text(root.read_text().replace("was 91.4\\% and then 68.2\\%", "was 68.2\\% and then 91.4\\%"))
    done = cli("bind", "main.tex", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "main.tex:4: conflict: binding_mismatch 68.2\\% is bound to results.json ours.clean_acc = 0.9142, " \
           "which prints as 91.4\\%" in done.stdout  # fmt: skip
    assert (tmp_path / "main.bindings.json").read_bytes() == reviewed  # the reviewed decisions stay
    assert cli("bind", "main.tex", "--check", cwd=tmp_path).returncode == 1  # --check agrees with bind
    assert sorted(f.split(": ")[1].split()[0] for f in findings(root)) == ["binding_mismatch", "binding_mismatch"]
    accepted = cli("bind", "main.tex", "--update", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    lines = accepted.stdout.splitlines()
    # each change printed, and a swap named as one: never two new bindings accepted quietly
    assert ("main.tex:4: 91.4\\% -> 68.2\\%: results.json ours.clean_acc -> results.json baseline.clean_acc "
            "(swapped with main.tex:4)") in lines  # fmt: skip
    assert ("main.tex:4: 68.2\\% -> 91.4\\%: results.json baseline.clean_acc -> results.json ours.clean_acc "
            "(swapped with main.tex:4)") in lines  # fmt: skip
    assert [(r["token"], r["at"]) for r in bindings(root)] == [("68.2\\%", "baseline.clean_acc"),
                                                               ("91.4\\%", "ours.clean_acc")]  # fmt: skip
    assert findings(root) == []


def test_a_rerun_log_is_a_conflict_and_update_lists_it(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE, {"results.json": RESULTS})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    (tmp_path / "results.json").write_text(json.dumps({**RESULTS, "ours": {"clean_acc": 0.925}}))
    done = cli("bind", "main.tex", cwd=tmp_path)
    assert done.returncode == 1 and "which prints as 92.5\\%" in done.stdout
    accepted = cli("bind", "main.tex", "--update", cwd=tmp_path)
    assert "main.tex:4: 91.4\\%: results.json ours.clean_acc -> no decision" in accepted.stdout.splitlines()
    assert [r["token"] for r in bindings(root)] == ["68.2\\%"]


def test_manual_one_number_and_a_changed_manual_number(tmp_path: Path) -> None:
    body = PROSE + "We train with a learning rate of 0.003 for all runs.\n"
    root = paper(tmp_path, body, {"results.json": RESULTS})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    assert [f for f in findings(root) if "0.003" in f][0].startswith("main.tex:5: unattested_number 0.003 fits no")
    bad = cli("bind", "main.tex", "--manual", "main.tex:5:0.004", "--reason", "setting", cwd=tmp_path)
    assert bad.returncode == 2 and "main.tex:5: holds no empirical number 0.004 on this line" in bad.stderr
    assert cli("bind", "main.tex", "--manual", "main.tex:5:0.003", cwd=tmp_path).returncode == 2  # no --reason
    done = cli("bind", "main.tex", "--manual", "main.tex:5:0.003", "--reason", "setting", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = [r for r in bindings(root) if r["transform"] == "manual"]
    assert (row["token"], row["log"], row["at"], row["value"], row["reason"]) == ("0.003", None, None, "0.003",
                                                                                  "setting")  # fmt: skip
    assert findings(root) == []
    root.write_text(root.read_text().replace("rate of 0.003", "rate of 0.005"))
    assert findings(root) == ["main.tex:5: binding_mismatch 0.005 is recorded as typed by hand: 0.003 (setting); "
                              "`patchwrite bind main.tex --update` accepts the change"]  # fmt: skip
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 1
    accepted = cli("bind", "main.tex", "--update", cwd=tmp_path)
    assert "main.tex:5: 0.003 -> 0.005: typed by hand (setting): 0.003 -> 0.005" in accepted.stdout.splitlines()
    assert findings(root) == []


def test_adoption_bind_and_manual_unattested_give_a_green_check_in_one_step(tmp_path: Path) -> None:
    body = PROSE + "We use a temperature of 0.7 and a margin of 1.5.\nPrior work reaches 77.3\\% here.\n"
    root = paper(tmp_path, body, {"results.json": RESULTS})
    done = cli("bind", "main.tex", "--manual", "unattested", "--reason", "not_logged", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    manual = sorted(r["token"] for r in bindings(root) if r["transform"] == "manual")
    assert manual == ["0.7", "1.5", "77.3\\%"] and {r["reason"] for r in bindings(root) if r["log"] is None} == {
        "not_logged"}  # fmt: skip
    assert findings(root) == []
    assert cli("bind", "main.tex", "--check", cwd=tmp_path).returncode == 0
    root.write_text(root.read_text().replace("margin of 1.5", "margin of 2.5"))  # from now on any change is caught
    assert [f.split(": ")[1].split()[:2] for f in findings(root)] == [["binding_mismatch", "2.5"]]


SHAPES = {
    # the rows of one shape: the old anchor (`& # & #`) of a cell matched the row above
    "repeated_rows": r"""\begin{table}
\caption{Accuracy (\%) per corruption.}\label{tab:main}
\begin{tabular}{lcccc}
Model & Clean & Noisy & Blur & Fog \\
ResNet & 91.4 & 86.9 & 75.2 & 60.1 \\
ViT & 93.2 & 88.1 & 77.4 & 65.5 \\
MLP & 71.3 & 62.2 & 54.8 & 43.3 \\
\end{tabular}
\end{table}
""",
    "multirow": r"""\begin{table}
\caption{Accuracy (\%) by model and size.}
\begin{tabular}{llcc}
Model & Size & Clean & Noisy \\
\multirow{2}{*}{ResNet} & small & 91.4 & 86.9 \\
 & large & 93.2 & 88.1 \\
\cmidrule(lr){1-4}
\multirow{2}{*}{MLP} & small & 71.3 & 62.2 \\
 & large & 54.8 & 43.3 \\
\end{tabular}
\end{table}
""",
    "rows_end_on_their_own_line": r"""\begin{table}
\caption{Accuracy (\%) per corruption.}
\begin{tabular}{lcc}
Model & Clean & Noisy
\\
ResNet & 91.4 & 86.9
\\
ViT & 93.2 & 88.1
\\
\end{tabular}
\end{table}
""",
    "two_tables_alike": r"""\begin{tabular}{lcc}
Model & Clean & Noisy \\
ResNet & 91.4 & 86.9 \\
ViT & 93.2 & 88.1 \\
\end{tabular}

\begin{tabular}{lcc}
Model & Clean & Noisy \\
ResNet & 75.2 & 60.1 \\
ViT & 77.4 & 65.5 \\
\end{tabular}
""",
}
GRID = {"resnet": {"clean": 0.914, "noisy": 0.869, "blur": 0.752, "fog": 0.601},
        "vit": {"clean": 0.932, "noisy": 0.881, "blur": 0.774, "fog": 0.655},
        "mlp": {"clean": 0.713, "noisy": 0.622, "blur": 0.548, "fog": 0.433}}  # fmt: skip
SIZES = {"resnet": {"small": {"clean": 0.914, "noisy": 0.869}, "large": {"clean": 0.932, "noisy": 0.881}},
         "mlp": {"small": {"clean": 0.713, "noisy": 0.622}, "large": {"clean": 0.548, "noisy": 0.433}}}  # fmt: skip
SECOND = {"first": {"resnet": {"clean": 0.914, "noisy": 0.869}, "vit": {"clean": 0.932, "noisy": 0.881}},
          "second": {"resnet": {"clean": 0.752, "noisy": 0.601}, "vit": {"clean": 0.774, "noisy": 0.655}}}  # fmt: skip


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_fresh_bind_passes_its_own_check_and_a_second_bind_changes_nothing(tmp_path: Path, shape: str) -> None:
    log = {"multirow": SIZES, "two_tables_alike": SECOND}.get(shape, GRID)
    root = paper(tmp_path, SHAPES[shape], {"results.json": log})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    first = (tmp_path / "main.bindings.json").read_bytes()
    rows = bindings(root)
    assert rows, "nothing bound"
    text = root.read_text().splitlines()
    for row in rows:  # each decision stands on the line of its number
        assert row["token"] in text[row["line"] - 1], row
    assert lock_findings(root) == []
    assert cli("bind", "main.tex", "--check", cwd=tmp_path).returncode == 0
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    assert (tmp_path / "main.bindings.json").read_bytes() == first
    # an edit above the table moves every line: each decision still meets its own number
    root.write_text(root.read_text().replace("\\begin{document}\n", "\\begin{document}\nA new first line.\n\n"))
    assert lock_findings(root) == []


def test_a_swap_of_two_cells_in_one_row_is_caught_and_a_row_above_never_claims_a_cell(tmp_path: Path) -> None:
    root = paper(tmp_path, SHAPES["repeated_rows"], {"results.json": GRID})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    root.write_text(root.read_text().replace("ViT & 93.2 & 88.1", "ViT & 88.1 & 93.2"))
    found = lock_findings(root)
    assert [f.split(": ", 1)[1].split()[:2] for f in found] == [["binding_mismatch", "88.1"],
                                                                ["binding_mismatch", "93.2"]]  # fmt: skip
    assert all(f.startswith("main.tex:9:") and "vit." in f for f in found)


def test_json_writes_the_file_as_bind_does(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE, {"results.json": RESULTS})
    done = cli("bind", "main.tex", "--json", cwd=tmp_path)
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert out["changed"] and (tmp_path / "main.bindings.json").is_file()
    assert [b["at"] for b in out["bindings"]] == [r["at"] for r in bindings(root)]
    assert out["conflicts"] == [] and out["unattested"] == []
    assert "written as without it" in " ".join(cli("bind", "--help", cwd=tmp_path).stdout.split())


def test_stale_decisions_stay_until_update_and_a_version_1_file_is_rebound_by_update(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE + "The baseline reaches 68.2\\% on the other split.\n", {"results.json": RESULTS})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    root.write_text(root.read_text().replace("The baseline reaches 68.2\\% on the other split.\n", ""))
    done = cli("bind", "main.tex", cwd=tmp_path)
    assert done.returncode == 0 and "stale_binding 68.2\\% no longer stands there" in done.stdout
    assert len(bindings(root)) == 3
    accepted = cli("bind", "main.tex", "--update", cwd=tmp_path)
    assert "main.tex:5: 68.2\\% -> (gone): results.json baseline.clean_acc -> dropped" in accepted.stdout.splitlines()
    assert len(bindings(root)) == 2
    (tmp_path / "main.bindings.json").write_text(json.dumps({"version": 1, "root": "main.tex", "bindings": []}))
    old = cli("bind", "main.tex", cwd=tmp_path)
    assert old.returncode == 2 and "is a version 1 bindings file" in old.stderr and "--update" in old.stderr
    assert cli("bind", "main.tex", "--update", cwd=tmp_path).returncode == 0 and len(bindings(root)) == 2


def test_one_binding_mismatch_shows_in_the_text_output_of_a_70_finding_paper(tmp_path: Path) -> None:
    require_tool("pdflatex")
    unlogged = "".join(f"Setting {n} uses a factor of {n}.25 here.\n\n" for n in range(1, 70))
    root = paper(tmp_path, PROSE + "\n" + unlogged, {"results.json": RESULTS})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    root.write_text(root.read_text().replace("was 91.4\\%", "was 92.4\\%"))
    done = cli("check", "main.tex", "--no-cache", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    head = lines.index("main.tex::numbers FAILED") + 1
    assert lines[head].startswith("  main.tex:4: binding_mismatch 92.4\\% is bound to results.json ours.clean_acc")
    assert "which prints as 91.4\\%" in lines[head]
    assert "  ... and 19 more unattested_number (all in --json)" in lines
    assert sum("unattested_number" in line for line in lines) == 51


def test_explain_gives_the_exact_commands(tmp_path: Path) -> None:
    mismatch = cli("explain", "binding_mismatch", cwd=tmp_path).stdout
    assert "`patchwrite bind ROOT --update` accepts it" in mismatch
    unbound = cli("explain", "unbound_number", cwd=tmp_path).stdout
    assert "`patchwrite bind ROOT --manual FILE:LINE:TOKEN --reason TEXT`" in " ".join(unbound.split())
    unattested = cli("explain", "unattested_number", cwd=tmp_path).stdout
    assert "`patchwrite bind ROOT --manual unattested --reason not_logged`" in " ".join(unattested.split())


def test_a_finding_names_the_logs_it_concerns_not_every_declared_log(tmp_path: Path) -> None:
    logs = {"results.json": RESULTS, "a.json": {"x": 0.1}, "b.json": {"y": 0.2}}
    root = paper(tmp_path, "Accuracy was 91.4\\% and the margin 3.75.\n", logs)
    (unattested,) = findings(root)  # the pool rule: no bindings file
    assert "is not attested (policy: decimals; logs: none of the 3 declared)" in unattested
    assert "a.json" not in unattested and "results.json" not in unattested
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    (held,) = [f for f in findings(root) if "3.75" in f]
    assert "fits no log entry" in held and ".json" not in held  # with bindings: only the entries it concerns


def test_a_number_a_log_holds_is_not_said_to_fit_no_entry(tmp_path: Path) -> None:
    bounds = {f"layer{k}": {"p_lo": round(0.3 + k / 50, 4), "p_hi": round(0.5 + k / 60, 4)} for k in range(8)}
    logs = {"results.json": RESULTS, "confidence.json": {**bounds, "last": {"p_hi": 0.7712, "p_lo": 0.41}}}
    root = paper(tmp_path, PROSE + "Its AUROC is 0.771 on held-out data.\n", logs)  # nothing names a bound
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    (found,) = [f for f in findings(root) if "0.771" in f]
    assert found.startswith("main.tex:5: unattested_number 0.771 is held by confidence.json last.p_hi = 0.7712, but")
    assert "`patchwrite bind main.tex --manual main.tex:5:0.771 --reason not_logged`" in found


def test_a_changed_number_whose_sentence_also_changed_is_a_mismatch_not_a_stale_decision(tmp_path: Path) -> None:
    # tester: dropping the cite changes two parts of the number's identity (sentence and after), so the decision
    # no longer paired and went stale (a warning) while the new number bound afresh: a changed number passed
    logs = {"results.json": {**RESULTS, "ours": {"clean_acc": 0.9142, "occluded_acc": 0.869}}}
    root = paper(tmp_path, "Accuracy was 91.4\\% compared with the baseline 68.2\\%~\\cite{lee2019}.\n", logs)
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    assert [r["token"] for r in bindings(root)] == ["91.4\\%", "68.2\\%"]
    root.write_text(root.read_text().replace("68.2\\%~\\cite{lee2019}.", "86.9\\%."))
    found = lock_findings(root)
    assert len(found) == 1 and found[0].startswith("main.tex:4: binding_mismatch 86.9\\%"), found
    assert cli("bind", "main.tex", "--check", cwd=tmp_path).returncode == 1  # bind sees the conflict too
    # the number kept, the sentence reworded: the decision still holds, nothing to report
    root.write_text(root.read_text().replace("86.9\\%.", "68.2\\% in our runs."))
    assert lock_findings(root) == []


def test_bind_is_bounded_in_time_and_writes_nothing_when_stopped(tmp_path: Path) -> None:
    # tester: `patchwrite bind` on a paper dense with numbers ran past 5 minutes (the MCP tool stopped at 60 s)
    dense = "Values: " + " ".join(f"{i % 997}.{i % 89:03d}" for i in range(200_000)) + ".\n"
    paper(tmp_path, PROSE + dense, {"results.json": RESULTS})
    done = cli("bind", "main.tex", "--timeout", "0.5", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "main.tex: the binder did not finish within 0.5 s and was stopped, nothing written" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "main.bindings.json").exists()
    assert "--timeout" in cli("bind", "--help", cwd=tmp_path).stdout
