"""A minus typeset apart from its number is the number's sign (tester3 N0c, a bypass: `$-$91.4` for a bound 91.4
printed -91.4 and passed every face)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import EXAMPLES, require_tool, run_cli

from pytest_patchwrite.tex.latex import scan

SIGNS = ["$-$", "${}-{}$", "\\(-\\)", "{-}", "\\ensuremath{-}", "\\textminus ", "$-$\\,"]


def _values(body: str) -> list[tuple[str, str]]:
    text = "\\documentclass{article}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    return [(n.text, str(n.value)) for n in scan(text, "main.tex").numbers]


@pytest.mark.parametrize("sign", SIGNS)
def test_a_detached_minus_is_the_sign(sign: str) -> None:
    assert _values(f"Ours & {sign}91.4 & 86.9 \\\\") == [("91.4", "-91.4"), ("86.9", "86.9")]


@pytest.mark.parametrize("body", ["seeds $0{-}49$ per tier", "$M[0..N{-}1]$ of 3", "in $2023$-$10$", "0.1$-$0.5"])
def test_a_minus_between_operands_is_no_sign(body: str) -> None:
    assert all(not value.startswith("-") for _, value in _values(body))


def test_a_sign_flip_of_a_bound_cell_is_a_binding_mismatch(tmp_path: Path) -> None:
    require_tool("pdflatex")
    paper = tmp_path / "paper"
    shutil.copytree(EXAMPLES / "paper", paper)
    assert run_cli("bind", "main.tex", cwd=paper).returncode == 0
    results = paper / "sections" / "results.tex"
    results.write_text(results.read_text().replace("Ours & 91.4 &", "Ours & $-$91.4 &"))
    done = run_cli("check", "main.tex", cwd=paper)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "results.tex:15: binding_mismatch 91.4 (read as -91.4: its minus stands apart) is bound to results.json "
        "ours.clean_acc"
    ) in done.stdout  # the finding shows the value the lock compares
