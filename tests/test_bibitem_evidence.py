"""An edit may not write the evidence its citations are judged by: a `\\bibitem` it adds defines nothing for it.

tester3 P1: an EDIT citing a made-up key and adding an invisible `\\bibitem` for it was accepted by `apply`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from support import EXAMPLES, rejected_edit, require_tool, run_cli


def test_an_edit_adding_a_bibitem_for_the_key_it_cites_is_rejected(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    paper = tmp_path / "paper"
    shutil.copytree(EXAMPLES / "paper", paper)
    assert run_cli("check", "main.tex", cwd=paper).returncode == 0
    results = paper / "sections" / "results.tex"
    line = results.read_text().splitlines()[2].replace("\\citep{lee2019}", "\\citep{fake2024}")
    hidden = ("{\\renewcommand\\section[2]{}\\begin{thebibliography}{9}\\bibitem[Fake(2024)]{fake2024}"
              "\\end{thebibliography}}")  # fmt: skip
    said = rejected_edit(paper, "sections/results.tex", f"```EDIT 3 3\n{line}%\n{hidden}\n```\n", tmp_path)
    assert "attested_by_change fake2024 is defined by a \\bibitem this edit adds" in said


def test_an_edit_of_a_line_near_an_existing_bibitem_is_not_judged_by_it(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "main.tex"
    root.write_text(
        "\\documentclass{article}\n\\begin{document}\nAs shown~\\cite{a}.\n"
        "\\begin{thebibliography}{9}\n\\bibitem{a} A. Paper.\n\\end{thebibliography}\n\\end{document}\n"
    )
    assert run_cli("check", "main.tex", cwd=tmp_path).returncode == 0
    (tmp_path / "edit.txt").write_text("```EDIT 3 3\nAs shown before~\\cite{a}.\n```\n")
    done = run_cli("apply", "main.tex", str(tmp_path / "edit.txt"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "attested_by_change" not in done.stdout + done.stderr
