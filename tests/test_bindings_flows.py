"""Bindings through the faces: `pytest --patchwrite-bind` (one writer under xdist), the `diff` item (base bindings)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import example_repository, git, require_tool

from pytest_patchwrite.flows.prdiff import GitBase, diff_manuscript
from pytest_patchwrite.gates.evidence import EvidenceConfig

EXAMPLE = Path(__file__).parent.parent / "examples" / "paper"

# every process of the run (controller and workers) records each write of a bindings file it makes
AUDIT = """
import os, sys

ROLE = ["unconfigured"]

def pytest_configure(config):
    ROLE[0] = "worker" if hasattr(config, "workerinput") else "controller"

def _audit(event, args):
    if event == "os.rename" and str(args[1]).endswith(".bindings.json"):
        with open(os.environ["BIND_AUDIT"], "a") as handle:
            handle.write(f"{os.getpid()} {ROLE[0]}\\n")

sys.addaudithook(_audit)
"""


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_patchwrite_bind_writes_once_from_the_controller(pytester: pytest.Pytester, mode: list[str]) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    shutil.copytree(EXAMPLE, pytester.path / "paper")
    shutil.copytree(EXAMPLE, pytester.path / "second")
    pytester.makeconftest(AUDIT)
    audit = pytester.path / "audit.txt"
    pytester._monkeypatch.setenv("BIND_AUDIT", str(audit))
    pytester._monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # when this test itself runs under xdist
    result = pytester.runpytest_subprocess(*mode, "--patchwrite-bind")
    result.assert_outcomes(passed=8)
    writes = audit.read_text().splitlines()
    assert len(writes) == 2 and {w.split()[1] for w in writes} == {"controller"}  # one file per manuscript
    assert len({w.split()[0] for w in writes}) == 1
    data = json.loads((pytester.path / "paper" / "main.bindings.json").read_text())
    # the six decimals and the counts `12 layers` and `over 3 seeds` (integers bind on evidence: `seeds` counts seeds,
    # it is no identifier, and `occlusion study` names the record labelled occlusion-v3)
    assert len(data["bindings"]) == 8
    result.stdout.fnmatch_lines(["*patchwrite bind: main.bindings.json: written (8 of 8 decided, 0 without a decision, "
                                 "0 change(s))*"])  # fmt: skip
    audit.unlink()
    again = pytester.runpytest_subprocess(*mode)  # without the flag nothing writes
    again.assert_outcomes(passed=8)
    assert not audit.exists()
    # a swap fails the numbers item against the committed bindings
    results = pytester.path / "paper" / "sections" / "results.tex"
    results.write_text(results.read_text().replace("Ours & 91.4 & 86.9", "Ours & 86.9 & 91.4"))
    failed = pytester.runpytest_subprocess(*mode)
    failed.assert_outcomes(passed=7, failed=1)
    failed.stdout.fnmatch_lines(["*results.tex:15: binding_mismatch 86.9 is bound to results.json ours.clean_acc*"])


def test_diff_judges_with_the_base_bindings_and_lists_binding_and_log_changes(tmp_path: Path) -> None:
    example_repository(tmp_path, ("paper",))
    root = tmp_path / "paper" / "main.tex"
    bind = [sys.executable, "-m", "pytest_patchwrite.cli", "bind", str(root)]
    assert subprocess.run(bind, capture_output=True, text=True).returncode == 0
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "bindings")  # the base holds the bindings file
    results = tmp_path / "paper" / "sections" / "results.tex"
    # the pull request swaps two table cells and rebinds: `bind` refuses (a conflict, the file kept), `--update`
    # accepts, so its own bindings file agrees with it
    results.write_text(results.read_text().replace("Ours & 91.4 & 86.9", "Ours & 86.9 & 91.4"))
    assert subprocess.run(bind, capture_output=True, text=True).returncode == 1
    assert subprocess.run([*bind, "--update"], capture_output=True, text=True).returncode == 0
    report = diff_manuscript(root, GitBase.open(tmp_path / "paper", "main"), EvidenceConfig())
    kinds = [(v.kind, v.token, v.severity) for v in report.failures]
    assert ("binding_mismatch", "86.9", "error") in kinds and ("binding_mismatch", "91.4", "error") in kinds
    assert ("binding_changed", "86.9", "warning") in kinds and not report.result().ok
    # a rerun: the log moves and the paper follows it; the base's bindings pass it, the log change is listed
    git(tmp_path, "checkout", "-q", "--", ".")
    log = tmp_path / "paper" / "results.json"
    log.write_text(log.read_text().replace("0.9142", "0.925"))
    results.write_text(results.read_text().replace("Ours & 91.4", "Ours & 92.5").replace("was 91.4", "was 92.5"))
    report = diff_manuscript(root, GitBase.open(tmp_path / "paper", "main"), EvidenceConfig())
    failing = [v for v in report.failures if v.severity == "error"]
    assert failing == [] and report.result().ok
    notes = [v.message for v in report.failures if v.kind == "log_changed"]
    assert "log results.json ours.clean_acc: 0.9142 -> 0.925" in notes
    # under evidence-from base only the base's logs attest: the same rerun fails, at the log change
    strict = diff_manuscript(root, GitBase.open(tmp_path / "paper", "main"), EvidenceConfig(), evidence_from="base")
    assert ("log_changed", "error") in {(v.kind, v.severity) for v in strict.failures} and not strict.result().ok
