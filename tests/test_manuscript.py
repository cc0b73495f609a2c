"""Manuscripts: roots, magic comments, inputs followed, the root of an input file."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_patchwrite.snapshot.manuscript import load_manuscript
from pytest_patchwrite.snapshot.roots import find_root
from pytest_patchwrite.tex.magic import magic_comments
from pytest_patchwrite.tex.texinputs import is_root


def test_is_root() -> None:
    assert is_root("\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n")
    assert not is_root("% \\documentclass{article}\n\\section{Intro}\n")
    assert not is_root("\\begin{document}\n\\documentclass{article}\n")
    assert not is_root("\\section{Results}\nText.\n")


def test_magic_comments_only_at_the_top() -> None:
    text = (
        "% !TEX program = xelatex\n%!TEX root = ../main.tex\n% !patchwrite log = a.json, b.csv\n"
        "\nx\n% !patchwrite numbers = all\n"
    )
    assert magic_comments(text) == {
        "tex.program": "xelatex",
        "tex.root": "../main.tex",
        "patchwrite.log": "a.json, b.csv",
    }


def test_load_follows_inputs_once_and_reports_missing(tmp_path: Path) -> None:
    (tmp_path / "sec").mkdir()
    (tmp_path / "sec" / "a.tex").write_text("A \\input{sec/b}\n% \\input{sec/commented}\n")
    (tmp_path / "sec" / "b.tex").write_text("B \\input{sec/a}\n")
    root = tmp_path / "main.tex"
    root.write_text(
        "\\documentclass{article}\n\\begin{document}\n\\input{sec/a}\n\\include{sec/b}\n\\input{nope}\n\\end{document}\n"
    )
    manuscript = load_manuscript(root)
    assert [p.name for p in manuscript.files] == ["main.tex", "a.tex", "b.tex"]
    assert [(p.name, line, name) for p, line, name in manuscript.missing] == [("main.tex", 5, "nope")]
    assert find_root(tmp_path / "sec" / "b.tex") == root.resolve()
    assert find_root(root) == root.resolve()


def test_find_root_by_magic_comment(tmp_path: Path) -> None:
    (tmp_path / "chapters").mkdir()
    child = tmp_path / "chapters" / "one.tex"
    child.write_text("% !TEX root = ../thesis.tex\nText.\n")
    (tmp_path / "thesis.tex").write_text("\\documentclass{report}\n\\begin{document}\n\\end{document}\n")
    assert find_root(child) == (tmp_path / "thesis.tex").resolve()


def test_root_finding_skips_fifos_and_never_blocks(tmp_path: Path) -> None:
    (tmp_path / "sections").mkdir()
    section = tmp_path / "sections" / "intro.tex"
    section.write_text("Intro.\n")
    os.mkfifo(tmp_path / "aaa.tex")
    os.mkfifo(tmp_path / "sections" / "notes.tex")
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\input{sections/intro}\n\\end{document}\n"
    )
    assert find_root(section) == (tmp_path / "main.tex").resolve()
