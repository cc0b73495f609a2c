"""What the ledger prints: paths by the one display rule, advice that works pasted, values in the number's own form.

Small papers of our own with real logs, the CLI run as a user runs it (from above the paper, so a path printed
absolute or relative to the wrong directory shows).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

from support import EXAMPLES, logged_paper, require_tool
from support import run_cli as cli

from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

RESULTS = {"baseline": {"clean_acc": 0.682}, "ours": {"clean_acc": 0.9142}}


def findings(root: Path) -> list[str]:
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    return [v.format(root.parent) for v in report.numbers or []]


def test_an_error_line_shows_its_file_as_check_shows_files(tmp_path: Path) -> None:
    # `patchwrite: error:` printed the path the exception held: often absolute (the root's resolved path)
    paper = tmp_path / "paper"
    shutil.copytree(EXAMPLES / "paper", paper, ignore=shutil.ignore_patterns("*.bindings.json", "*.pdf"))
    main = paper / "main.tex"
    main.write_text(main.read_text().replace("% !patchwrite log = results.json\n", ""))
    done = cli("bind", "paper/main.tex", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("patchwrite: error: paper/main.tex: declares no experimental log"), done.stderr
    assert str(tmp_path) not in done.stderr
    inside = cli("bind", "main.tex", cwd=paper)
    assert inside.stderr.startswith("patchwrite: error: main.tex: declares no experimental log"), inside.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()  # a file outside the working directory reads better absolute, as `check` shows it
    away = cli("bind", str(main), cwd=elsewhere)
    assert away.stderr.startswith(f"patchwrite: error: {main}: declares no experimental log"), away.stderr


def test_the_pool_rule_note_names_the_root_and_works_pasted(tmp_path: Path) -> None:
    require_tool("pdflatex")
    paper = tmp_path / "my paper"
    shutil.copytree(EXAMPLES / "paper", paper, ignore=shutil.ignore_patterns("*.bindings.json", "*.pdf"))
    done = cli("check", "my paper/main.tex", cwd=tmp_path)
    (note,) = [line for line in done.stdout.splitlines() if line.startswith("  note: ")]
    assert note.endswith("; `patchwrite bind 'my paper/main.tex'` ties each to its log entry"), note
    command = note.split("`")[1]
    pasted = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert pasted.returncode == 0, pasted.stdout + pasted.stderr
    assert (paper / "main.bindings.json").is_file()
    assert shlex.split(command)[:2] == ["patchwrite", "bind"]


def test_a_changed_separated_count_is_expected_in_its_own_grouped_form(tmp_path: Path) -> None:
    body = "We train on 10{,}578 documents of the corpus.\n"
    root = logged_paper(tmp_path, body, {"corpus.json": {"corpus": {"n_documents": 10578}}})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    root.write_text(root.read_text().replace("10{,}578", "10{,}587"))
    (found,) = [f for f in findings(root) if "binding_mismatch" in f]
    assert "corpus.json corpus.n_documents = 10578, which prints as 10{,}578;" in found, found


def test_a_cited_number_a_log_holds_is_not_said_to_fit_no_entry(tmp_path: Path) -> None:
    body = "Accuracy was 91.4\\% here.\n\nPrior work reports 77.3\\% on it~\\cite{lee2019}.\n"
    bounds = {f"layer{k}": {"p_lo": round(0.3 + k / 50, 4), "p_hi": round(0.5 + k / 60, 4)} for k in range(8)}
    logs = {"results.json": RESULTS, "other.json": {**bounds, "unrelated": {"p_hi": 0.7731}}}  # no value alone
    root = logged_paper(tmp_path, body, logs)
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    (cited,) = [f for f in findings(root) if "77.3" in f]
    assert cited.startswith("main.tex:6: warning: cited_number 77.3\\% is held by other.json unrelated.p_hi = "
                            "0.7731, but its sentence cites lee2019"), cited  # fmt: skip
    assert "fits no log entry" not in cited


def test_a_bound_count_whose_log_value_grows_huge_is_a_mismatch_not_a_crash(tmp_path: Path) -> None:
    # tester5 F1: a log value of 4e31 for a bound `40` was an internal error (decimal.InvalidOperation, exit 3):
    # the expected form was quantized in a context sized by the value's digits (one), not by its magnitude
    body = "The standard method needs 40 iterations and 195 cuts.\n"
    root = logged_paper(tmp_path, body, {"results.json": {"standard": {"iterations": 40, "cuts": 195}}})
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    (tmp_path / "results.json").write_text('{"standard": {"iterations": 4e31, "cuts": 195}}')
    (found,) = [f for f in findings(root) if "binding_mismatch" in f]
    assert "results.json standard.iterations = 4e31, which prints as 40000000000000000000000000000000;" in found, found
    (tmp_path / "results.json").write_text('{"standard": {"iterations": 1e999999999, "cuts": 195}}')  # decimal.Overflow
    (found,) = [f for f in findings(root) if "binding_mismatch" in f]
    assert "standard.iterations = 1e999999999, which prints as 1E+999999999;" in found, found
