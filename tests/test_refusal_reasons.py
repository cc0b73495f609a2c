"""A refused or unparsable input is one located violation that says the actual reason."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from support import require_tool

HEAD = "\\documentclass{article}\n"


def _check(root: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", "check", str(root)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=root.parent, env=env, timeout=120)


def _paper(tmp_path: Path, root_text: str) -> Path:
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text(root_text)
    return paper / "main.tex"


def test_a_hard_linked_input_is_refused_as_a_hard_link(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = _paper(tmp_path, HEAD + "\\begin{document}\n\\input{sec}\n\\end{document}\n")
    (root.parent / "sec.tex").write_text("Hello.\n")
    os.link(root.parent / "sec.tex", tmp_path / "elsewhere.tex")
    done = _check(root, tmp_path)
    assert done.returncode == 1, done.stderr
    [line] = [x for x in done.stdout.splitlines() if "outside_tree" in x]
    assert "main.tex:3: outside_tree sec has a second hard link" in line
    assert "leads outside" not in line


def test_a_log_glob_matching_only_a_link_out_of_the_tree_is_the_same_located_error(tmp_path: Path) -> None:
    require_tool("pdflatex")
    (tmp_path / "secret.json").write_text('{"acc": 91.4}')
    outcomes = []
    for name in ("results.json", "res*"):
        root = _paper(
            tmp_path, f"% !patchwrite log = {name}\n" + HEAD + "\\begin{document}\n91.4\\%\n\\end{document}\n"
        )
        (root.parent / "results.json").symlink_to(tmp_path / "secret.json")
        done = _check(root, tmp_path)
        assert "no experimental log matches" not in done.stderr
        outcomes.append((done.returncode, [x.split(" declares")[0] for x in done.stderr.splitlines()]))
        shutil.rmtree(root.parent)
    # a declared log the locks cannot use is a configuration error at its declaration (exit 2), as `bind` says too
    assert outcomes[0] == outcomes[1] == (2, ["patchwrite: error: main.tex:1:"]), outcomes


def test_bibtexparser_says_nothing_on_stderr_and_its_detail_is_in_the_violation(tmp_path: Path) -> None:
    require_tool("bibtex")
    root = _paper(tmp_path, HEAD + "\\begin{document}\n\\cite{a}\n\\bibliography{refs}\n\\end{document}\n")
    (root.parent / "refs.bib").write_text("@article{a, title = {A}, year = 2020}\n@article{b,\n  title = {B\n")
    done = _check(root, tmp_path)
    assert "Parsing of" not in done.stderr and "aborted" not in done.stderr, done.stderr
    [line] = [x for x in done.stdout.splitlines() if "refs.bib" in x]
    assert "refs.bib:2:" in line and "cannot be parsed: " in line and "BlockAbortedException" not in line


def test_a_bib_linked_out_of_the_tree_is_refused_and_each_cite_says_so(tmp_path: Path) -> None:
    require_tool("pdflatex")
    (tmp_path / "outside.bib").write_text("@article{a, title={T}, author={A}, journal={J}, year={2020}}\n")
    root = _paper(tmp_path, HEAD + "\\begin{document}\n\\cite{a}\n\\bibliography{refs}\n\\end{document}\n")
    (root.parent / "refs.bib").symlink_to(tmp_path / "outside.bib")
    done = _check(root, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "main.tex:4: outside_tree refs leads outside" in done.stdout
    [cite] = [x for x in done.stdout.splitlines() if "unknown_cite" in x]
    # one bibliography is declared, and refused: the cite must not say none is
    assert "main.tex:3: unknown_cite a is cited but the only bibliography declared is refused" in cite, cite
    assert "(outside_tree at main.tex:4)" in cite and "no bibliography is declared" not in cite
