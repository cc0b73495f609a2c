"""A job that ends before `\\end{document}` without an error drops the rest of the paper: the compile gate fails it.

The engine's record (`.fls`) is the evidence: LaTeX opens the `.aux` for writing at `\\begin{document}` and reads it
back at `\\end{document}`; a run that never read it back never got there (tester3 C1: `\\csname @@end\\endcsname`
was accepted by `apply` and `check`, and the table after it was gone from the PDF).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import EXAMPLES, rejected_edit, require_tool, run_cli

ENDS = ["\\clearpage\\csname @@end\\endcsname", "\\clearpage\\makeatletter\\@@end", "\\stop"]


def _example(tmp_path: Path) -> Path:
    require_tool("pdflatex")
    shutil.copytree(EXAMPLES / "paper", tmp_path / "paper")
    return tmp_path / "paper"


@pytest.mark.parametrize("end", ENDS)
def test_a_job_ended_early_fails_the_compile(tmp_path: Path, end: str) -> None:
    paper = _example(tmp_path)
    main = paper / "main.tex"
    main.write_text(main.read_text().replace("\\input{sections/results}", end + "\n\\input{sections/results}"))
    done = run_cli("check", "main.tex", "--no-cache", cwd=paper)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "main.tex::compile FAILED" in done.stdout
    assert "main.tex:0: truncated_document" in done.stdout and "before \\end{document}" in done.stdout


def test_an_edit_that_ends_the_job_is_rejected_and_the_file_keeps_its_bytes(tmp_path: Path) -> None:
    paper = _example(tmp_path)
    assert run_cli("check", "main.tex", cwd=paper).returncode == 0  # HEAD passes: the candidate is warm
    first = (paper / "sections" / "results.tex").read_text().splitlines()[0]
    edit = f"```EDIT 1 1\n{first}\\clearpage\\csname @@end\\endcsname\n```\n"
    assert "truncated_document" in rejected_edit(paper, "sections/results.tex", edit, tmp_path)


def test_a_document_under_nofiles_writes_no_aux_and_still_passes(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "main.tex"
    root.write_text("\\documentclass{article}\n\\nofiles\n\\begin{document}\nHello.\n\\end{document}\n")
    done = run_cli("check", "main.tex", "--no-cache", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "truncated_document" not in done.stdout
