"""Bindings: each empirical number tied to the log entry it reports, and the lock that holds the paper to it.

Every paper here is a small one of our own, written for one class the bindings issue names: a
results table beside a big per-image log, a swapped accuracy and baseline, a rerun that changed
a logged value, derived numbers, a `Params (M)` column, a percentage column beside plain decimals,
an edit that moves lines. The binder, the lock and the CLI run for real on files in tmp_path.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from pytest_patchwrite.flows.bind import bind_root, write_bindings
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates.evidence import EvidenceConfig, EvidenceGate, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

RESULTS = {
    "baseline": {"clean_acc": 0.682, "occluded_acc": 0.417},
    "ours": {"clean_acc": 0.9142, "occluded_acc": 0.869},
}
TABLE = r"""\begin{table}[t]
  \centering
  \caption{Accuracy (\%) under patch occlusion.}
  \begin{tabular}{lcc}
    \toprule
    Model & Clean & Occluded \\
    \midrule
    Baseline & 68.2 & 41.7 \\
    Ours & 91.4 & 86.9 \\
    \bottomrule
  \end{tabular}
\end{table}
"""
PROSE = "Accuracy was 91.4\\% compared with the baseline 68.2\\%.\n"


def paper(directory: Path, body: str, logs: dict[str, object], log_names: str | None = None) -> Path:
    """Write a root manuscript declaring its logs, and the logs (dicts as JSON, strings as they are)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in logs.items():
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        (directory / name).write_text(text)
    names = log_names or ", ".join(logs)
    root = directory / "main.tex"
    root.write_text(
        f"% !patchwrite log = {names}\n\\documentclass{{article}}\n\\begin{{document}}\n{body}\\end{{document}}\n"
    )
    return root


def bind(root: Path) -> dict:
    """Bind a manuscript, write its bindings file, return the file's JSON."""
    outcome = bind_root(root, EvidenceConfig())
    write_bindings(outcome.path, outcome.new_text)
    return json.loads(outcome.new_text)


def numbers(root: Path) -> list[tuple[str, str, str]]:
    """Return the number lock's findings on the manuscript as (kind, token, severity)."""
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    assert report.numbers is not None
    return [(v.kind, v.token, v.severity) for v in report.numbers]


def messages(root: Path) -> list[str]:
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    return [v.format(root.parent) for v in report.numbers or []]


def by_token(data: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in data["bindings"]:
        out.setdefault(row["token"], []).append(row)
    return out


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=120)


def test_example_table_binds_as_a_block_with_percent_from_the_caption(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE + TABLE, {"results.json": RESULTS})
    data = bind(root)
    assert data["version"] == 2 and data["root"] == "main.tex"
    rows = by_token(data)
    assert [r["at"] for r in rows["91.4"]] == ["ours.clean_acc"]
    assert [r["at"] for r in rows["68.2"]] == ["baseline.clean_acc"]
    assert [r["at"] for r in rows["41.7"]] == ["baseline.occluded_acc"]
    assert [(r["at"], r["transform"], r["value"]) for r in rows["86.9"]] == [("ours.occluded_acc", "percent", "0.869")]
    assert {r["at"] for r in rows["91.4\\%"]} == {"ours.clean_acc"}
    assert all(set(r) == {"file", "anchor", "line", "token", "log", "at", "value", "transform", "formula",
                          "alternatives"} for r in data["bindings"])  # fmt: skip
    assert numbers(root) == []


def test_big_per_image_log_passes_the_pool_but_not_the_binding(tmp_path: Path) -> None:
    generator = random.Random(7)
    scores = "image,score\n" + "".join(f"img_{i:05d},{generator.random():.4f}\n" for i in range(20_000))
    root = paper(tmp_path, PROSE + TABLE, {"results.json": RESULTS, "per_image.csv": scores})
    data = bind(root)
    assert {r["log"] for r in data["bindings"]} == {"results.json"}  # no cell of 20,000 per-image scores
    results = root.parent / "main.tex"
    text = results.read_text()
    results.write_text(text.replace("Ours & 91.4 &", "Ours & 92.7 &"))
    config = EvidenceConfig()
    manuscript = load_manuscript(root, boundary=config.boundary(root))
    pool = evaluate(manuscript, config, bindings_from_disk=False)
    assert pool.numbers == []  # some per-image score rounds to 0.927: the pool rule passes it
    assert numbers(root) == [("binding_mismatch", "92.7", "error")]
    assert (
        "main.tex:13: binding_mismatch 92.7 is bound to results.json ours.clean_acc = 0.9142, which prints as 91.4; "
        "`patchwrite bind main.tex --update` accepts the change" in messages(root)
    )


def test_swapped_accuracy_and_baseline_fail_check_and_apply(tmp_path: Path) -> None:
    logs = {"results.json": {"accuracy": 91.4, "baseline": 68.2}}
    body = "Accuracy was 91.4 compared with the baseline 68.2~\\cite{lee2019}.\n"
    root = paper(tmp_path, body, logs)
    data = bind(root)
    assert [(r["token"], r["at"], r["transform"]) for r in data["bindings"]] == [
        ("91.4", "accuracy", "identity"), ("68.2", "baseline", "identity")]  # fmt: skip
    before = (root.parent / "main.bindings.json").read_bytes()
    swapped = "```EDIT 4 4\nAccuracy was 68.2 compared with the baseline 91.4~\\cite{lee2019}.\n```\n"
    result = try_patch(root, swapped, [EvidenceGate(root)])
    assert not result.accepted and result.reason == "binding_mismatch:68.2"
    assert {v.token for v in result.violations} == {"68.2", "91.4"}
    assert "\\cite{lee2019}" in root.read_text() and "was 91.4" in root.read_text()
    root.write_text(
        root.read_text().replace("was 91.4 compared with the baseline 68.2", "was 68.2 compared with the baseline 91.4")
    )
    assert sorted(numbers(root)) == [("binding_mismatch", "68.2", "error"), ("binding_mismatch", "91.4", "error")]
    assert (root.parent / "main.bindings.json").read_bytes() == before


def test_rerun_log_must_be_followed_and_an_edit_that_follows_it_is_accepted(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE + TABLE, {"results.json": RESULTS})
    bind(root)
    bindings = (root.parent / "main.bindings.json").read_bytes()
    rerun = json.loads(json.dumps(RESULTS))
    rerun["ours"]["clean_acc"] = 0.925
    (root.parent / "results.json").write_text(json.dumps(rerun))
    assert sorted(numbers(root)) == [("binding_mismatch", "91.4", "error"), ("binding_mismatch", "91.4\\%", "error")]
    assert any("binding_mismatch 91.4 is bound to results.json ours.clean_acc = 0.925, which prints as 92.5" in m
               for m in messages(root))  # fmt: skip
    line = root.read_text().splitlines().index("    Ours & 91.4 & 86.9 \\\\") + 1
    wrong = try_patch(root, f"EDIT {line} {line}\n    Ours & 93.1 & 86.9 \\\\\n", [EvidenceGate(root)])
    assert not wrong.accepted and wrong.reason == "binding_mismatch:93.1"
    follow = try_patch(root, f"EDIT {line} {line}\n    Ours & 92.5 & 86.9 \\\\\n", [EvidenceGate(root)])
    assert follow.accepted, follow.violations
    assert numbers(root) == [("binding_mismatch", "91.4\\%", "error")]
    assert (root.parent / "main.bindings.json").read_bytes() == bindings  # apply never writes it


def test_derived_difference_relative_improvement_and_column_mean(tmp_path: Path) -> None:
    seeds = [{"seed": 0, "f1": 0.702}, {"seed": 1, "f1": 0.712}, {"seed": 2, "f1": 0.731}]
    logs = {"results.json": {"ours": {"acc": 0.914}, "baseline": {"acc": 0.682}, "seeds": seeds}}
    body = ("Ours reaches 91.4\\% against 68.2\\% for the baseline, 23.2 points more, "
            "a relative improvement of 34.0\\%.\n\nOver three seeds the F1 score averages 71.5\\%.\n")  # fmt: skip
    root = paper(tmp_path, body, logs)
    rows = by_token(bind(root))
    diff, relative, mean = rows["23.2"][0], rows["34.0\\%"][0], rows["71.5\\%"][0]
    assert diff["transform"] == "derived" and diff["formula"]["op"] == "difference"
    assert [o["at"] for o in diff["formula"]["operands"]] == ["ours.acc", "baseline.acc"]
    assert diff["at"] == "ours.acc - baseline.acc"
    assert relative["formula"]["op"] == "relative_change" and relative["formula"]["power"] == 2
    assert mean["formula"] == {"op": "mean", "operands": [{"log": "results.json", "at": "mean(seeds[*].f1)",
                                                           "transform": "percent"}]}  # fmt: skip
    assert numbers(root) == []
    logs["results.json"]["baseline"]["acc"] = 0.672  # type: ignore[index]
    (root.parent / "results.json").write_text(json.dumps(logs["results.json"]))
    found = numbers(root)
    assert ("binding_mismatch", "23.2", "error") in found and ("binding_mismatch", "34.0\\%", "error") in found


def test_params_in_millions_column_binds_with_a_scale(tmp_path: Path) -> None:
    table = r"""\begin{table}
\caption{Model size and accuracy.}
\begin{tabular}{lrr}
Model & Params (M) & Top-1 (\%) \\
ResNet & 25.6 & 76.1 \\
ViT & 86.6 & 81.8 \\
\end{tabular}
\end{table}
"""
    csv = "model,params,top1\nResNet,25557032,0.7613\nViT,86567656,0.818\n"
    root = paper(tmp_path, table, {"models.csv": csv})
    rows = by_token(bind(root))
    assert [(r["at"], r["transform"]) for r in rows["25.6"]] == [("row 1 (model=ResNet), column params", "scale:1e-6")]
    assert [(r["at"], r["transform"]) for r in rows["86.6"]] == [("row 2 (model=ViT), column params", "scale:1e-6")]
    assert [(r["at"], r["transform"]) for r in rows["81.8"]] == [("row 2 (model=ViT), column top1", "percent")]
    assert numbers(root) == []


def test_percent_column_next_to_plain_decimals_needs_the_whole_column(tmp_path: Path) -> None:
    table = r"""\begin{tabular}{lcc}
Model & Acc & Loss \\
Ours & 91.4 & 0.31 \\
Base & 86.9 & 0.45 \\
\end{tabular}
"""
    csv = "model,acc,loss\nOurs,0.914,0.31\nBase,0.869,0.45\n"
    root = paper(tmp_path, table, {"scores.csv": csv})
    rows = by_token(bind(root))
    assert [(r["at"], r["transform"]) for r in rows["91.4"]] == [("row 1 (model=Ours), column acc", "percent")]
    assert [(r["at"], r["transform"]) for r in rows["0.45"]] == [("row 2 (model=Base), column loss", "identity")]
    # one cell of the column without a [0, 1] partner: no cell of it is read as x100
    lonely = paper(tmp_path / "lonely", table.replace("86.9", "55.5"), {"scores.csv": csv})
    outcome = bind_root(lonely, EvidenceConfig())
    assert sorted(o.token for o in outcome.reconciled.result.unattested) == ["55.5", "91.4"]


def test_bindings_survive_an_edit_that_moves_lines(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE + TABLE, {"results.json": RESULTS})
    first = bind(root)
    moved = "```EDIT 4 4\nWe first describe the setup.\n\nThen the results follow.\n" + PROSE + "```\n"
    result = try_patch(root, moved, [EvidenceGate(root)])
    assert result.accepted, result.violations
    assert numbers(root) == []  # every binding found its number by its identity (sentence, table row and column)
    proc = cli("bind", str(root), "--check")
    assert proc.returncode == 0 and "up to date" in proc.stdout  # a line is a hint: nothing changes without --update
    assert cli("bind", str(root), "--update").returncode == 0
    second = json.loads((root.parent / "main.bindings.json").read_text())
    assert [(r["token"], r["at"], r["line"] - 3) for r in second["bindings"]] == [
        (r["token"], r["at"], r["line"]) for r in first["bindings"]]  # fmt: skip
    assert cli("bind", str(root), "--check").returncode == 0


def test_unbound_numbers_and_stale_bindings(tmp_path: Path) -> None:
    logs = {"results.json": {"ours": {"acc": 0.914, "f1": 0.5, "recall": 0.512},
                             "baseline": {"f1": 0.5, "recall": 0.512}}}  # fmt: skip
    root = paper(tmp_path, "Accuracy was 91.4\\%.\n", logs)
    bind(root)
    text = root.read_text()
    added = ("Accuracy was 91.4\\%.\nThe F1 of ours is 0.5000.\nA recall of 0.512 is common.\n"
             "An F1 of 0.50 is common.\nA 0.5 appears.")  # fmt: skip
    root.write_text(text.replace("Accuracy was 91.4\\%.", added))
    found = numbers(root)
    assert ("unbound_number", "0.5000", "warning") in found  # context names ours.f1 best
    # two entries fit alike, both named: ambiguous, no decision and no guess (the ledger: not the lock's finding)
    assert ("unattested_number", "0.512", "error") in found
    # two digits: the context names the field, but 2 of the 90 numbers 0.10 .. 0.99 are logged F1s (a chance of
    # 2.2%, above the 1% bound), so the name does not tell the number from a coincidence: unattested
    assert ("unattested_number", "0.50", "error") in found
    assert ("unattested_number", "0.5", "error") in found  # one digit, nothing names an entry: a coincidence
    root.write_text(text.replace("Accuracy was 91.4\\%.", "No number here."))
    assert numbers(root) == [("stale_binding", "91.4\\%", "warning")]


def test_bind_cli_check_exit_codes_json_and_bad_files(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE + TABLE, {"results.json": RESULTS})
    assert cli("bind", str(root), "--check").returncode == 1  # no file yet
    assert not (tmp_path / "main.bindings.json").exists()
    written = cli("bind", str(root))
    assert written.returncode == 0 and "written" in written.stdout
    assert cli("bind", str(root), "--check").returncode == 0
    out = json.loads(cli("bind", str(root), "--json").stdout)
    assert out["counts"]["bound"] == 6 and out["unattested"] == []
    assert set(out["bindings"][0]) >= {"file", "line", "token", "log", "at", "value", "transform", "alternatives"}
    (tmp_path / "results.json").write_text(json.dumps({**RESULTS, "ours": {"clean_acc": 0.93, "occluded_acc": 0.869}}))
    assert cli("bind", str(root), "--check").returncode == 1
    (tmp_path / "main.bindings.json").write_text('{"version": 7}')
    bad = cli("bind", str(root), "--check")
    assert bad.returncode == 2 and "main.bindings.json" in bad.stderr and "not a bindings file" in bad.stderr
    assert "Traceback" not in bad.stderr
    check = cli("check", str(root), "--no-cache")
    assert check.returncode == 2 and "main.bindings.json" in check.stderr
    nolog = tmp_path / "nolog.tex"
    nolog.write_text("\\documentclass{article}\n\\begin{document}\n1.5\n\\end{document}\n")
    proc = cli("bind", str(nolog))
    assert proc.returncode == 2 and "declares no experimental log" in proc.stderr


def test_an_oversized_or_foreign_bindings_file_is_bad_input_and_kept(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE + TABLE, {"results.json": RESULTS})
    assert cli("bind", str(root)).returncode == 0
    ledger = tmp_path / "main.bindings.json"
    text = ledger.read_text()
    huge = text[:-2] + " " * (17 << 20) + text[-2:]  # valid JSON past the 16 MB cap: it once ran for minutes
    ledger.write_text(huge)
    for args in (("bind", str(root)), ("bind", str(root), "--update"), ("check", str(root), "--no-cache")):
        done = cli(*args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "main.bindings.json: is 17.0 MB; the cap for bindings is 16 MB" in done.stderr
        assert "Traceback" not in done.stderr
    assert ledger.read_text() == huge
    rows = json.loads(text)
    rows["bindings"][0]["line"] = -5  # a line before the first is no place: it was printed as `intro.tex:-5`
    ledger.write_text(json.dumps(rows))
    negative = cli("bind", str(root))
    assert negative.returncode == 2 and "binding 1 has a bad anchor or line" in negative.stderr
    rows["bindings"][0].update(line=1, transform="manual", reason="setting", value=None)  # tester5 F4: `: None`
    ledger.write_text(json.dumps(rows))
    unprinted = cli("check", str(root), "--no-cache")
    assert unprinted.returncode == 2 and "binding 1 has a bad token or value" in unprinted.stderr, unprinted.stderr
    ledger.write_text("[1, 2]")
    refused = cli("bind", str(root), "--update")  # the advice it prints must be one that works
    assert refused.returncode == 2 and "not a bindings file" in refused.stderr
    assert "delete it and rerun `patchwrite bind`" in refused.stderr and "--update" not in refused.stderr
    assert ledger.read_text() == "[1, 2]"
    ledger.unlink()
    assert cli("bind", str(root)).returncode == 0 and json.loads(ledger.read_text())["version"] == 2


def test_named_bindings_file_and_pool_note(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE, {"results.json": RESULTS})
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    assert report.pool_only == 2 and report.bindings_file is None
    root.write_text("% !patchwrite bindings = locks/numbers.json\n" + root.read_text())
    (tmp_path / "locks").mkdir()
    bind(root)
    assert (tmp_path / "locks" / "numbers.json").is_file() and not (tmp_path / "main.bindings.json").exists()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    assert report.bindings_file == (tmp_path / "locks" / "numbers.json") and report.numbers == []


def test_suggest_lists_result_files_of_the_work_tree(tmp_path: Path) -> None:
    root = paper(tmp_path, PROSE + TABLE, {"results.json": RESULTS})
    (tmp_path / "other.json").write_text(json.dumps({"lr": 0.003}))
    (tmp_path / "config.yaml").write_text("ours:\n  clean_acc: 0.9142\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    proc = cli("bind", str(root), "--suggest")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["6", "of", "6", "results.json"]
    assert any(line.split()[-1] == "config.yaml" for line in lines)
    assert not any("other.json" in line for line in lines)
    assert lines[-1].startswith("% !patchwrite log = results.json")


def test_number_of_cited_work_with_bindings_is_a_warning_but_an_added_one_is_rejected(tmp_path: Path) -> None:
    body = PROSE + "Prior work reports 77.3\\% on this split~\\cite{lee2019}.\n"
    root = paper(tmp_path, body, {"results.json": RESULTS})
    bind(root)
    assert numbers(root) == [("cited_number", "77.3\\%", "warning")]
    added = "```EDIT 5 5\nPrior work reports 77.3\\% on this split, and 81.2\\% on the other~\\cite{lee2019}.\n```\n"
    result = try_patch(root, added, [EvidenceGate(root)])
    assert not result.accepted and result.reason == "unattested_number:81.2\\%"


def test_a_bindings_file_naming_places_outside_the_tree_is_bad_input(tmp_path: Path) -> None:
    # a pull request's bindings file must not make us look at (or print as a place) /etc/shadow
    root = paper(tmp_path / "paper", PROSE, {"results.json": RESULTS})
    data = bind(root)
    for field, outside in (("file", "../../etc/passwd"), ("log", "/etc/shadow")):
        rows = [{**data["bindings"][0], field: outside}, *data["bindings"][1:]]
        (root.parent / "main.bindings.json").write_text(json.dumps({**data, "bindings": rows}))
        done = cli("check", str(root), "--no-cache")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "main.bindings.json" in done.stderr and f"binding 1 names a {field} outside" in done.stderr
        assert "etc/" not in done.stdout and "Traceback" not in done.stderr
