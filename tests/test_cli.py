"""The `patchwrite` console script: exit codes, JSON and one-line input errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAD = "\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n"


def run(*args: str, stdin: str = "", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "doc.tex"
    path.write_text(HEAD)
    return path


def test_number(doc: Path) -> None:
    proc = run("number", str(doc))
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[2] == "3 | Hello."


def test_apply_accepts_from_stdin_and_file(doc: Path, tmp_path: Path) -> None:
    proc = run("apply", str(doc), "-", "--json", "--no-compile-gate", stdin="```EDIT 3 3\nHi.\n```\n")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "accepted": True,
        "stage": None,
        "reason": None,
        "span": [3, 3],
        "violations": [],
        "skipped": {"numbers": "no experimental log declared"},
    }
    assert doc.read_text() == HEAD.replace("Hello.", "Hi.")
    edit = tmp_path / "edit.txt"
    edit.write_text("DELETE 3 3\n")
    proc = run("apply", str(doc), str(edit), "--no-compile-gate")
    assert proc.returncode == 0 and "accepted DELETE 3 3" in proc.stdout
    assert "Hi." not in doc.read_text()


def test_apply_rejection_exit_1_and_json(doc: Path) -> None:
    proc = run("apply", str(doc), "--json", stdin="```EDIT 2 9\nx\n```\n")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert (out["accepted"], out["stage"], out["reason"], out["span"]) == (False, "parse", "past_eof", None)
    assert out["violations"][0]["kind"] == "past_eof"
    assert set(out["violations"][0]) == {"kind", "file", "line", "token", "message", "severity", "help"}
    assert doc.read_text() == HEAD


@pytest.mark.parametrize(
    ("setup", "problem"),
    [
        ("missing", "no such file"),
        ("directory", "is a directory"),
        ("latin1", "not valid UTF-8"),
    ],
)
def test_input_errors_exit_2_with_one_line(tmp_path: Path, doc: Path, setup: str, problem: str) -> None:
    target, stdin = str(doc), "EDIT 1 1\nx\n"
    if setup == "missing":
        target = str(tmp_path / "nope.tex")
    elif setup == "directory":
        target = str(tmp_path)
    else:
        doc.write_bytes(b"caf\xe9\n")
    proc = run("apply", target, stdin=stdin)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0]
    assert target.split("/")[-1] in lines[0]


@pytest.mark.parametrize("reply", ["", "  \n\n", "I think the fix is fine.\n"])
def test_a_reply_without_a_header_is_rejected_as_no_edit_empty_or_not(doc: Path, reply: str) -> None:
    # the reply is a candidate: empty or chatty, it holds no edit, so it is rejected (1), not bad input (2)
    proc = run("apply", str(doc), "-", "--no-compile-gate", stdin=reply)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[:2] == [f"{doc}: rejected at parse (no_edit)",
        f"{doc}: no_edit: no `EDIT N M` or `DELETE N M` line found{'' if reply.strip() else ' (the reply is empty)'}"]
    assert proc.stderr == "" and doc.read_text() == HEAD


def test_usage_error_exit_2() -> None:
    proc = run("frobnicate")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("check", "x.tex", "--timeout", "inf"),
         "patchwrite: error: --timeout: 'inf' is not a positive, finite number of seconds (at most 604800)"),
        (("check", "x.tex", "--timeout", "soon"), "patchwrite: error: --timeout: 'soon' is not a number of seconds"),
        (("check",), "patchwrite: error: check: the following arguments are required: FILE"),
    ],
)  # fmt: skip
def test_usage_errors_say_the_problem_in_our_one_line_form(args: tuple[str, ...], line: str) -> None:
    proc = run(*args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", line + "\n")


def test_check_json_shape_and_exit_codes(tmp_path: Path) -> None:
    import shutil

    from support import require_tool

    require_tool("pdflatex")
    paper = tmp_path / "paper"
    shutil.copytree(Path(__file__).parent.parent / "examples" / "paper", paper)
    proc = run("check", str(paper / "main.tex"), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    gates = out["manuscripts"][0]["gates"]
    assert set(gates) == {"compile", "citations", "numbers", "placeholders"}
    assert all(g["ok"] is True and g["violations"] == [] for g in gates.values())
    results = paper / "sections" / "results.tex"
    results.write_text(results.read_text().replace("91.4\\%", "99.9\\%").replace("lee2019", "fake2024"))
    proc = run("check", str(paper / "main.tex"))
    assert proc.returncode == 1
    assert "sections/results.tex:3: unattested_number 99.9\\% is not attested" in proc.stdout
    assert "sections/results.tex:3: unknown_cite fake2024" in proc.stdout
    proc = run("check", str(paper / "sections" / "results.tex"), str(paper / "main.tex"))
    assert proc.returncode == 1 and proc.stdout.count("::compile") == 1  # a section stands for its root
    orphan = tmp_path / "orphan.tex"
    orphan.write_text("Just a fragment.\n")
    proc = run("check", str(orphan))
    assert proc.returncode == 2 and "not a root manuscript" in proc.stderr
    # a directory stands for every root below it, each once (a dot-directory is skipped); a .bib is no manuscript
    hidden = tmp_path / ".hidden"
    hidden.mkdir()
    (hidden / "main.tex").write_text("\\documentclass{article}\\begin{document}\\undefinedX\\end{document}\n")
    proc = run("check", str(tmp_path), str(paper / "main.tex"), "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    checked = [Path(m["path"]).name for m in json.loads(proc.stdout)["manuscripts"]]
    assert checked == ["main.tex"], checked
    proc = run("check", str(paper / "refs.bib"))
    assert proc.returncode == 2 and "is a bibliography, not a manuscript" in proc.stderr and not proc.stdout
    proc = run("check", str(paper / "sections"))
    assert proc.returncode == 2 and "holding no root manuscript" in proc.stderr


def test_version() -> None:
    from pytest_patchwrite import __version__

    proc = run("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"patchwrite {__version__}"
    assert __version__.count(".") == 2  # pyproject.toml reads it from here


def test_an_apply_process_imports_only_what_apply_uses(doc: Path, tmp_path: Path) -> None:
    edit = tmp_path / "edit.txt"
    edit.write_text("EDIT 0 0\nx\n")  # rejected at parse: the process ends right after the parser ran
    script = (
        "import sys\nfrom pytest_patchwrite.cli import main\ncode = main(sys.argv[1:])\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pytest_patchwrite.commands.bind', "
        "'pytest_patchwrite.mcpserver', 'pytest_patchwrite.autoraters', 'pytest_patchwrite.proposers', "
        "'pytest_patchwrite.corpus', 'pytest_patchwrite.pages'))))\nsys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, "apply", str(doc), str(edit)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout.splitlines()[-1]) == (1, "[]"), done.stderr
    listed = subprocess.run([sys.executable, "-m", "pytest_patchwrite.cli", "--help"], capture_output=True, text=True)
    assert all(name in listed.stdout for name in ("apply", "bind", "mcp", "rate", "live-stress"))


def test_an_accepted_edit_reports_the_bound_number_it_removed(tmp_path: Path) -> None:
    """An edit that writes a bound number in words is accepted (nothing it adds is unattested), but the decision it
    left stale is shown: before, `apply` printed only `accepted` and the lock of 91.4% was silently gone."""
    (tmp_path / "results.json").write_text('{"ours": {"accuracy": 0.914}}\n')
    paper = tmp_path / "main.tex"
    sentence = "Our accuracy is 91.4\\% on the held-out split."
    paper.write_text(f"% !patchwrite log = results.json\n{HEAD.replace('Hello.', sentence)}")
    assert run("bind", str(paper), cwd=tmp_path).returncode == 0
    edit = "```EDIT 4 4\nOur accuracy is ninety-one percent on the held-out split.\n```\n"
    proc = run("apply", "main.tex", "-", "--no-compile-gate", stdin=edit, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("main.tex: accepted EDIT 4 4")
    assert lines[1].startswith("main.tex:4: warning: stale_binding 91.4\\% was bound to results.json ours.accuracy")
    paper.write_text(f"% !patchwrite log = results.json\n{HEAD.replace('Hello.', sentence)}")  # HEAD again
    proc = run("apply", "main.tex", "-", "--json", "--no-compile-gate", stdin=edit, cwd=tmp_path)
    out = json.loads(proc.stdout)
    assert out["accepted"] and [(v["kind"], v["severity"]) for v in out["violations"]] == [("stale_binding", "warning")]
