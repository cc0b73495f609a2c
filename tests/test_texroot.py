"""`% !TEX root` may not lead out of the file's repository: a clear exit-2 error, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_tool

from pytest_patchwrite.errors import InputError
from pytest_patchwrite.manuscript import find_root

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
