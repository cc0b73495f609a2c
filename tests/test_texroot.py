"""`% !TEX root` may not lead out of the file's repository: a clear exit-2 error, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.errors import InputError
from pytest_patchwrite.snapshot.roots import find_root

EXAMPLE = Path(__file__).parent.parent / "examples" / "paper"


def layout(tmp_path: Path, named: str) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "main.tex").write_text("\\documentclass{article}\\begin{document}\\undefinedCANARY\\end{document}\n")
    paper = tmp_path / "e4"
    shutil.copytree(EXAMPLE, paper)
    section = paper / "sections" / "results.tex"
    section.write_text(f"% !TEX root = {named}\n" + section.read_text() + "\\badmacro\n")
    return section


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.mark.parametrize("named", ["../../victim/main.tex", "{tmp}/victim/main.tex"])
def test_a_root_outside_the_tree_is_an_error_at_its_line(tmp_path: Path, named: str) -> None:
    section = layout(tmp_path, named.format(tmp=tmp_path))
    with pytest.raises(InputError, match="outside this file's repository") as caught:
        find_root(section)
    assert (caught.value.line, caught.value.reason) == (1, "outside_tree")
    (section.parent.parent / "reply.txt").write_text("EDIT 3 3\nhello\n")
    for args in (["check", "sections/results.tex"], ["apply", "sections/results.tex", "reply.txt"]):
        done = run(*args, cwd=section.parent.parent)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "results.tex:1: `% !TEX root" in done.stderr and "Traceback" not in done.stderr
        assert "CANARY" not in done.stdout + done.stderr


def test_inside_a_git_repository_the_work_tree_bounds_it(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: apt-get install git")
    section = layout(tmp_path, "../../victim/main.tex")
    subprocess.run(["git", "init", "-q", str(section.parent.parent)], check=True)
    with pytest.raises(InputError, match="outside this file's repository"):
        find_root(section)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # now both lie in one repository
    shutil.rmtree(section.parent.parent / ".git")
    assert find_root(section) == (tmp_path / "victim" / "main.tex").resolve()


def test_the_usual_root_one_level_up_still_works(tmp_path: Path) -> None:
    require_tool("pdflatex")
    section = layout(tmp_path, "../main.tex")
    assert find_root(section) == (section.parent.parent / "main.tex").resolve()
    done = run("check", "sections/results.tex", "--no-cache", cwd=section.parent.parent)
    assert done.returncode == 1 and "results.tex:" in done.stdout and "\\badmacro" in done.stdout


def test_a_section_read_through_a_macro_is_an_input_error_not_a_fragment_compile(tmp_path: Path) -> None:
    paper = tmp_path / "paper"
    shutil.copytree(EXAMPLE, paper)
    main = paper / "main.tex"
    text = main.read_text().replace("\\input{sections/intro}", "\\newcommand{\\sect}[1]{\\input{sections/#1}}"
                                    "\\sect{intro}").replace("\\input{sections/results}", "\\sect{results}")
    main.write_text(text)
    section = paper / "sections" / "results.tex"
    before = section.read_bytes()
    first = before.decode().splitlines()[0]
    (paper / "edit.txt").write_text(f"EDIT 1 1\n{first}\n")
    with pytest.raises(InputError, match="nearby root: ../main.tex") as caught:
        find_root(section)
    assert "% !TEX root = ../main.tex" in str(caught.value)
    done = run("apply", "sections/results.tex", "edit.txt", cwd=paper)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "sections/results.tex" in done.stderr and "undefined_control_sequence" not in done.stdout + done.stderr
    assert section.read_bytes() == before
    # the fix the message names makes the edit go through the root, which reads the section through its macro
    section.write_bytes(b"% !TEX root = ../main.tex\n" + before)
    (paper / "edit.txt").write_text(f"EDIT 2 2\n{first}\n")
    require_tool("pdflatex")
    done = run("apply", "sections/results.tex", "edit.txt", cwd=paper)
    assert done.returncode == 0, done.stdout + done.stderr
    assert find_root(section) == main.resolve()
