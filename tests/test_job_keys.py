"""Keys the job defines itself, and commands that only look like citations (the cite lock after a compile).

Real engines and real classes: REVTeX 4.2 (texlive-publishers) turns each footnote into an entry of the job's own
`<job>Notes.bib` and cites it (`Note1`) in the `.aux`; a style of our own defines `\\citename` as acl2012.sty does
(a name formatter inside `\\cite` and `\\bibitem` labels), which the static list reads as harvard's citation
command. After a compile that passed, the engine's record decides; a made-up key in a real `\\cite` keeps failing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.cli import main
from pytest_patchwrite.flows.check import CheckOptions, check_manuscript

REFS = """@article{alpha2020, title = {Alpha}, author = {A. One}, journal = {Phys. Rev. Lett.}, year = {2020},
  volume = {1}, pages = {1}}
@article{beta2021, title = {Beta}, author = {B. Two}, journal = {Phys. Rev. A}, year = {2021}, volume = {2},
  pages = {2}}
"""


def revtex_paper(directory: Path, extra: str = "") -> Path:
    """Write a REVTeX 4.2 letter with two footnotes and two citations into `directory`; return its root."""
    require_tool("pdflatex")
    require_tool("bibtex")
    (directory / "qleet.bib").write_text(REFS)
    (directory / "qleet.tex").write_text(
        "\\documentclass[aps,prl,reprint]{revtex4-2}\n"  # 1
        "\\begin{document}\n"  # 2
        "\\title{Footnotes as references}\n\\author{A. Author}\n\\maketitle\n"  # 3-5
        "Known things~\\cite{alpha2020}.\\footnote{A footnote REVTeX makes an entry.}\n"  # 6
        "More things~\\cite{beta2021}.\\footnote{A second note.}\n"  # 7
        f"{extra}"  # 8
        "\\bibliography{qleet}\n"
        "\\end{document}\n"
    )
    return directory / "qleet.tex"


def cite_findings(root: Path) -> list[tuple[int, str, str]]:
    """Return (line, kind, token) of every finding of the citations item of a check without the cache."""
    results = check_manuscript(root, CheckOptions(use_cache=False))
    assert results["compile"].ok, results["compile"]
    return sorted((v.line, v.kind, v.token) for v in results["citations"].violations)


def test_revtex_footnotes_are_keys_the_job_defines(tmp_path: Path) -> None:
    assert cite_findings(revtex_paper(tmp_path)) == []


def test_a_made_up_key_in_a_revtex_paper_still_fails(tmp_path: Path) -> None:
    root = revtex_paper(tmp_path, "A claim~\\cite{made2024up}.\n")
    assert cite_findings(root) == [(8, "unknown_cite", "made2024up")]


def test_an_ignore_cite_line_also_silences_the_engines_warning(tmp_path: Path) -> None:
    root = revtex_paper(tmp_path, "A claim~\\cite{made2024up}.\n")
    # without the comment: the scan's error (the engine's warning of the same key is not listed twice)
    assert cite_findings(root) == [(8, "unknown_cite", "made2024up")]
    root.write_text(root.read_text().replace("\\cite{made2024up}.", "\\cite{made2024up}. % patchwrite: ignore cite"))
    assert cite_findings(root) == []


def test_a_notes_bib_planted_in_the_checkout_defines_nothing(tmp_path: Path) -> None:
    # the job writes patchwriteNotes.bib itself; a file of that name in the checkout is overwritten in the sandbox,
    # and the cite lock never resolves it from the checkout
    (tmp_path / "patchwriteNotes.bib").write_text("@misc{planted2024, title = {Planted}}\n")
    root = revtex_paper(tmp_path, "A claim~\\csname cite\\endcsname{planted2024}.\n")
    assert [(k, t) for _line, k, t in cite_findings(root)] == [("unknown_cite", "planted2024")]


def test_a_bibcite_the_document_writes_defines_no_key_it_cites(tmp_path: Path) -> None:
    # a \bibcite written to the .aux by the source itself resolves the citation for TeX, never for the lock
    forged = "\\makeatletter\\immediate\\write\\@auxout{\\string\\bibcite{forged2024}{9}}\\makeatother\n"
    root = revtex_paper(tmp_path, forged + "A claim~\\cite{forged2024}.\n")
    assert (9, "unknown_cite", "forged2024") in cite_findings(root)


# acl2012.sty's way: `\citename` formats the author part of a label, inside `\@biblabel` and the cite commands
ACLSTYLE = r"""\ProvidesPackage{aclnames}[2012/01/01 a name formatter, as acl2012.sty defines it]
\def\@biblabel#1{\def\citename##1{##1}[#1]\hfill}
\def\@lbibitem[#1]#2{\item[\@biblabel{#1}\hfill]\if@filesw
      {\def\protect##1{\string ##1\space}\immediate
        \write\@auxout{\string\bibcite{#2}{#1}}}\fi\ignorespaces}
\def\@cite#1#2{{#1\if@tempswa , #2\fi}}
\def\cite{\def\citename##1{##1, }\@ifnextchar [{\@tempswatrue\@citex}{\@tempswafalse\@citex[]}}
"""


def acl_paper(directory: Path, extra: str = "") -> Path:
    """Write a paper with a hand-written bibliography whose labels use `\\citename`; return its root."""
    require_tool("pdflatex")
    (directory / "aclnames.sty").write_text(ACLSTYLE)
    (directory / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{aclnames}\n\\begin{document}\n"  # 1-3
        "Named entities~\\cite{Bird:09} and wikis~\\cite{Nothman:12}.\n"  # 4
        f"{extra}"  # 5
        "\\begin{thebibliography}{}\n"
        "\\bibitem[\\protect\\citename{Bird et al.}2009]{Bird:09}\nS. Bird et al. 2009. NLTK.\n"
        "\\bibitem[\\protect\\citename{Nothman et al.}2012]{Nothman:12}\nJ. Nothman et al. 2012. Wikipedia.\n"
        "\\end{thebibliography}\n\\end{document}\n"
    )
    return directory / "paper.tex"


def test_a_name_formatter_that_looks_like_a_citation_is_none(tmp_path: Path) -> None:
    assert cite_findings(acl_paper(tmp_path)) == []


def test_a_made_up_key_beside_the_name_formatter_fails(tmp_path: Path) -> None:
    root = acl_paper(tmp_path, "Also~\\cite{Made:24}.\n")
    assert cite_findings(root) == [(5, "unknown_cite", "Made:24")]


def test_without_a_passing_compile_the_scans_rule_stands(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = acl_paper(tmp_path, "Broken \\undefinedmacro.\n")
    assert main(["check", str(root), "--no-cache", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    cites = out["manuscripts"][0]["gates"]["citations"]["violations"]
    assert {v["token"] for v in cites} == {"Bird et al.", "Nothman et al."}


def test_a_key_only_the_record_cites_names_the_command_it_stands_in(tmp_path: Path) -> None:
    require_tool("pdflatex")
    (tmp_path / "mycites.sty").write_text("\\ProvidesPackage{mycites}\n\\newcommand\\citefrom[1]{\\cite{#1}}\n")
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage{mycites}\n\\begin{document}\nAs \\citefrom{ghost2024}.\n"
        "\\begin{thebibliography}{1}\n\\bibitem{real} Real.\n\\end{thebibliography}\n\\end{document}\n"
    )
    results = check_manuscript(tmp_path / "main.tex", CheckOptions(use_cache=False))
    found = [v for v in results["citations"].violations if v.kind == "unknown_cite"]
    assert [(v.line, v.token) for v in found] == [(4, "ghost2024")]
    assert "through \\citefrom, a command the scan does not read as a citation" in found[0].message
