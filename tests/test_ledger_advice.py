"""The ledger as a new user meets it: every command a finding advises works when pasted where it was printed.

A paper in a subdirectory, checked as `patchwrite check DIR` from above it; `--manual` places that name no
number; `--manual unattested` records exactly what `check` lists. Real .tex, real logs, the CLI in a subprocess.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from support import require_tool

RESULTS = {"baseline": {"clean_acc": 0.682}, "ours": {"clean_acc": 0.9142}}
SECTION = "Accuracy was 91.4\\% compared with the baseline 68.2\\%.\n\nThe margin is 3.75 in every run.\n"
ADVICE = re.compile(r"`(patchwrite bind [^`]+)`")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=300)


def paste(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run an advised `patchwrite ...` command as a user pasting it into a shell at `cwd`."""
    words = shlex.split(command)
    assert words[0] == "patchwrite", command
    return cli(*words[1:], cwd=cwd)


def nested_paper(top: Path) -> Path:
    """Write top/b/main.tex, which inputs sections/results.tex, and its log; return the root."""
    paper = top / "b"
    (paper / "sections").mkdir(parents=True)
    (paper / "results.json").write_text(json.dumps(RESULTS))
    (paper / "sections" / "results.tex").write_text(SECTION)
    root = paper / "main.tex"
    root.write_text("% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\n"
                    "\\input{sections/results}\n\\end{document}\n")  # fmt: skip
    return root


def numbers_lines(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith("::numbers FAILED"))
    return [line.strip() for line in lines[start + 1 :] if line.startswith("  ")]


def test_advice_under_check_dir_names_the_root_and_place_as_run_from_there(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = nested_paper(tmp_path)
    assert cli("bind", "b/main.tex", cwd=tmp_path).returncode == 0
    section = root.parent / "sections" / "results.tex"
    section.write_text(section.read_text().replace("was 91.4", "was 92.4"))
    done = cli("check", ".", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    mismatch, unattested = numbers_lines(done.stdout)
    assert mismatch.startswith("b/sections/results.tex:1: binding_mismatch 92.4\\% is bound to results.json ")
    assert mismatch.endswith("`patchwrite bind b/main.tex --update` accepts the change"), mismatch
    assert unattested.startswith("b/sections/results.tex:3: unattested_number 3.75 fits no log entry")
    manual = ADVICE.findall(unattested)[0]
    assert manual == "patchwrite bind b/main.tex --manual b/sections/results.tex:3:3.75 --reason not_logged"
    # the same verdict (a compile cache hit) checked from the paper's directory names paths from there
    here = cli("check", "main.tex", "--json", cwd=root.parent)
    found = json.loads(here.stdout)["manuscripts"][0]["gates"]["numbers"]["violations"]
    assert [v["file"] for v in found] == ["sections/results.tex", "sections/results.tex"]
    assert "`patchwrite bind main.tex --update`" in found[0]["message"]
    assert "--manual sections/results.tex:3:3.75 " in found[1]["message"] and str(tmp_path) not in found[1]["message"]
    # pasted where they were printed, both commands do what they say
    recorded = paste(manual, tmp_path)
    assert recorded.returncode == 1, recorded.stdout + recorded.stderr  # recorded; the edited number is a conflict
    assert "b/sections/results.tex:3: 3.75: no decision -> typed by hand (not_logged)" in recorded.stdout.splitlines()
    accepted = paste(ADVICE.findall(mismatch)[0], tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    again = cli("check", ".", cwd=tmp_path)  # 92.4 fits no entry now: unattested, with its own advice
    (left,) = numbers_lines(again.stdout)
    assert left.startswith("b/sections/results.tex:1: unattested_number 92.4\\% fits no log entry"), left
    assert paste(ADVICE.findall(left)[0], tmp_path).returncode == 0
    assert cli("check", ".", cwd=tmp_path).returncode == 0


def test_manual_on_a_missing_file_or_past_the_end_says_so_and_writes_nothing(tmp_path: Path) -> None:
    root = nested_paper(tmp_path)
    assert cli("bind", "main.tex", cwd=root.parent).returncode == 0
    reviewed = (root.parent / "main.bindings.json").read_bytes()
    cases = {
        "sections/other.tex:3:3.75": "sections/other.tex: no such file (neither from here nor from the paper's "
        "directory",
        "sections/results.tex:30:3.75": "sections/results.tex:30: line 30 is past the end (the file has 3 lines)",
        "sections/results.tex:0:3.75": "sections/results.tex:0: line 0: lines count from 1",
        "sections:1:3.75": "sections: is a directory",
        "results.json:1:0.682": "results.json: is not a file the manuscript reads",
        "sections/results.tex:2:3.75": "sections/results.tex:2: holds no empirical number 3.75 on this line (no "
        "empirical number stands there)",
    }
    for spec, said in cases.items():
        done = cli("bind", "main.tex", "--manual", spec, "--reason", "setting", cwd=root.parent)
        assert done.returncode == 2, (spec, done.stdout, done.stderr)
        assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, (spec, done.stderr)
        assert "Traceback" not in done.stderr
        assert (root.parent / "main.bindings.json").read_bytes() == reviewed


def test_manual_unattested_records_exactly_what_check_lists_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
    from pytest_patchwrite.snapshot.manuscript import load_manuscript

    (tmp_path / "results.json").write_text(json.dumps(RESULTS))
    root = tmp_path / "main.tex"
    root.write_text("% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\n"
                    "Accuracy was 91.4\\% compared with the baseline 68.2\\%.\n\n"
                    "We ran 300 epochs on 8 GPUs over 3 days.\n\n"  # counts the decimals policy never reports
                    "We use a temperature of 0.7 and a margin of 1.5.\n\n"
                    "Prior work reaches 77.3\\% here \\cite{smith2020}.\n\\end{document}\n")  # fmt: skip
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    listed = sorted((v.line, v.token) for v in report.numbers or [] if v.kind in ("unattested_number", "cited_number"))
    assert listed == [(8, "0.7"), (8, "1.5"), (10, "77.3\\%")]
    done = cli("bind", "main.tex", "--manual", "unattested", "--reason", "not_logged", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads((tmp_path / "main.bindings.json").read_text())["bindings"]
    assert sorted((r["line"], r["token"]) for r in rows if r["transform"] == "manual") == listed
    assert "3 of 5 number(s) decided" not in done.stdout and "5 of 5 number(s) decided (3 typed by hand" in done.stdout
    written = (tmp_path / "main.bindings.json").read_bytes()
    again = cli("bind", "main.tex", "--manual", "unattested", "--reason", "not_logged", cwd=tmp_path)
    assert again.returncode == 0 and "main.bindings.json: unchanged:" in again.stdout, again.stdout
    assert (tmp_path / "main.bindings.json").read_bytes() == written
    assert evaluate(load_manuscript(root, boundary=config.boundary(root)), config).numbers == []


def test_a_log_linked_outside_the_tree_is_exit_2_for_check_and_bind_alike(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "results.json").write_text(json.dumps(RESULTS))
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "results.json").symlink_to(outside / "results.json")
    (paper / "main.tex").write_text("% !patchwrite log = results.json\n\\documentclass{article}\n"
                                    "\\begin{document}\nAccuracy was 91.4\\%.\n\\end{document}\n")  # fmt: skip
    said = "main.tex:1: declares the experimental log results.json (patchwrite_log or `% !patchwrite log`), which " \
           "leads outside the manuscript's tree"  # fmt: skip
    for args in (("check", "main.tex"), ("check", "main.tex", "--json"), ("bind", "main.tex"), ("bind", "main.tex",
                 "--update"), ("bind", "main.tex", "--manual", "unattested", "--reason", "x")):  # fmt: skip
        done = cli(*args, cwd=paper)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
    assert not (paper / "main.bindings.json").exists()


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)


def test_the_pytest_numbers_item_shows_the_changed_lines_finding_before_the_cap(tmp_path: Path) -> None:
    """60 numbers no log holds stand in the base; a pull request adds one more at the end: the numbers item lists it,
    not behind the cap of 50 per kind (the diff item lists it too, but the numbers item is the one people read)."""
    require_tool("pdflatex")
    require_tool("git")
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "config", "user.email", "test@example.org")
    _git(tmp_path, "config", "user.name", "Test")
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "results.json").write_text(json.dumps(RESULTS))
    old = "".join(f"Setting {n} uses a factor of {n}.25 here.\n\n" for n in range(1, 61))
    root = paper / "main.tex"
    root.write_text("% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\n" + old
                    + "\\end{document}\n")  # fmt: skip
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    root.write_text(root.read_text().replace("\\end{document}", "The new margin is 7.125 here.\n\\end{document}"))
    cmd = [sys.executable, "-m", "pytest", "paper", "--patchwrite-base", "main", "-p", "no:cacheprovider",
           "-p", "no:randomly", "-k", "numbers"]  # fmt: skip
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout[-3000:]
    lines = [line for line in done.stdout.splitlines() if "unattested_number" in line]
    assert lines[0].startswith("paper/main.tex:124: unattested_number 7.125 is not attested"), lines[:2]
    assert "... and 11 more unattested_number (all in --patchwrite-report FILE)" in done.stdout


def test_the_mcp_check_lists_a_binding_mismatch_behind_many_findings_first(tmp_path: Path) -> None:
    require_tool("pdflatex")
    from pytest_patchwrite.mcpserver.workspace import MAX_VIOLATIONS, Workspace

    (tmp_path / "results.json").write_text(json.dumps(RESULTS))
    many = "".join(f"Setting {n} uses a factor of {n}.25 here.\n\n" for n in range(1, 41))
    root = tmp_path / "main.tex"
    root.write_text("% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\n" + many
                    + "Accuracy was 91.4\\% compared with the baseline 68.2\\%.\n\\end{document}\n")  # fmt: skip
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    root.write_text(root.read_text().replace("was 91.4", "was 92.4"))
    numbers = Workspace(tmp_path).check("main.tex")["manuscripts"][0]["gates"]["numbers"]
    assert len(numbers["violations"]) == MAX_VIOLATIONS and numbers["violations_omitted"] == 16
    first = numbers["violations"][0]
    assert (first["kind"], first["line"], first["token"]) == ("binding_mismatch", 84, "92.4\\%")
    assert "`patchwrite bind main.tex --update`" in first["message"]


def test_advice_pasted_into_a_shell_works_for_a_percent_and_a_count_fitting_several_entries_is_quiet(
    tmp_path: Path,
) -> None:
    from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
    from pytest_patchwrite.snapshot.manuscript import load_manuscript

    logs = {"a.json": {"n_samples": 200, "acc": 0.9142}, "b.json": {"n_samples": 200, "acc": 0.682}}
    for name, content in logs.items():
        (tmp_path / name).write_text(json.dumps(content))
    root = tmp_path / "main.tex"
    root.write_text("% !patchwrite log = a.json, b.json\n\\documentclass{article}\n\\begin{document}\n"
                    "We draw 200 samples; 95\\% of them are kept.\n\\end{document}\n")  # fmt: skip
    assert cli("bind", "main.tex", cwd=tmp_path).returncode == 0
    config = EvidenceConfig()
    found = evaluate(load_manuscript(root, boundary=config.boundary(root)), config).numbers or []
    assert [(v.kind, v.token) for v in found] == [("unattested_number", "95\\%")]  # `200` fits two alike: no finding
    command = ADVICE.findall(found[0].shown_message(tmp_path))[-1]
    assert command == "patchwrite bind main.tex --manual 'main.tex:4:95\\%' --reason not_logged"
    shell = command.replace("patchwrite", f"{sys.executable} -m pytest_patchwrite.cli", 1)
    pasted = subprocess.run(["bash", "-c", shell], cwd=tmp_path, capture_output=True, text=True)
    assert pasted.returncode == 0, pasted.stdout + pasted.stderr
    assert evaluate(load_manuscript(root, boundary=config.boundary(root)), config).numbers == []
    root.write_text(root.read_text().replace("95\\%", "96\\%"))
    conflict = cli("bind", "main.tex", cwd=tmp_path)
    assert conflict.returncode == 1
    assert conflict.stdout.splitlines()[-1].endswith("`patchwrite bind main.tex --update` accepts the changes")
    assert "200" not in conflict.stdout  # neither listed nor counted as without a decision


def test_patchwrite_diff_names_the_root_and_its_advice_from_where_it_ran(tmp_path: Path) -> None:
    require_tool("git")
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "config", "user.email", "test@example.org")
    _git(tmp_path, "config", "user.name", "Test")
    root = nested_paper(tmp_path)
    assert cli("bind", "b/main.tex", cwd=tmp_path).returncode == 0
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "bound")
    section = root.parent / "sections" / "results.tex"
    section.write_text(section.read_text().replace("was 91.4\\% compared with the baseline 68.2\\%",
                                                   "was 68.2\\% compared with the baseline 91.4\\%"))  # fmt: skip
    done = cli("diff", "b/main.tex", "--base", "main", "--no-compile", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("b/main.tex::diff FAILED against main"), lines[-1]
    mismatches = [line for line in lines if "binding_mismatch" in line]
    assert len(mismatches) == 2
    for line in mismatches:
        assert line.startswith("b/sections/results.tex:1: binding_mismatch "), line
        assert "`patchwrite bind b/main.tex --update`" in line, line
