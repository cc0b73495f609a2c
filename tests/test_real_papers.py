"""Classes of real papers that must build and check cleanly (or fail where they really fail), one row each.

Each row is a minimal document of our own that reproduces what a real paper does
(citations in \\input files under plain BibTeX, a biblatex document of only
\\nocite{*}, ...); the real engine and bibliography tool run on it through the
same `check_manuscript` as `patchwrite check`.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.flows.check import CheckOptions, check_manuscript
from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.model import Violation
from pytest_patchwrite.snapshot.manuscript import load_manuscript

REFS = """@book{knuth1984, author = {Donald Knuth}, title = {The {\\TeX}book}, year = {1984}, publisher = {AW}}
@book{lamport1994, author = {Leslie Lamport}, title = {{\\LaTeX}}, year = {1994}, publisher = {AW}}
"""

# an .aux entry that changes on every run: the cross-references never settle
OSCILLATING = r"""\documentclass{article}
\makeatletter
\newcommand\osc[1]{\gdef\oscval{#1}}
\newcommand\oscval{0}
\AtEndDocument{\immediate\write\@auxout{\string\osc{\the\numexpr\oscval+1\relax}}}
\makeatother
\begin{document}
Run \oscval.\label{a} See \ref{a}.
\end{document}
"""


@dataclass(frozen=True)
class Paper:
    """One class of real paper: its files, the tools it needs, and each item's expected violation kinds."""

    id: str
    files: dict[str, str]
    expect: dict[str, set[str]]
    tools: tuple[str, ...] = ("pdflatex",)
    engine: str = "pdflatex"
    root: str = "main.tex"
    options: dict[str, object] = field(default_factory=dict)
    runs: int | None = None


PAPERS = [
    Paper(
        "plain_bibtex_citations_in_inputs",
        {
            "main.tex": "\\documentclass{article}\n\\begin{document}\n\\tableofcontents\n\\input{sections/intro}\n"
            "\\input{sections/method}\n\\include{back}\n\\end{document}\n",
            # the bibliography in an \\include'd file: its \\bibdata is in back.aux, not main.aux
            "back.tex": "\\bibliographystyle{plain}\n\\bibliography{refs}\n",
            "sections/intro.tex": "\\section{Introduction}\nAs \\cite{knuth1984} shows (Section~\\ref{sec:m}).\n",
            "sections/method.tex": "\\section{Method}\\label{sec:m}\nWe follow \\cite{lamport1994}.\n",
            "refs.bib": REFS,
        },
        {"compile": set(), "citations": set(), "placeholders": set()},
        tools=("pdflatex", "bibtex"),
        runs=3,  # pdflatex, bibtex, pdflatex, pdflatex: as latexmk
    ),
    Paper(
        "biblatex_only_nocite_star",
        {
            "main.tex": "\\documentclass{article}\n\\usepackage[backend=biber]{biblatex}\n"
            "\\addbibresource{refs.bib}\n\\begin{document}\n\\nocite{*}\n\\printbibliography\n\\end{document}\n",
            "refs.bib": REFS,
        },
        {"compile": set(), "citations": set(), "placeholders": set()},
        tools=("pdflatex", "biber"),
    ),
    Paper(
        "cross_references_that_never_settle",
        {"main.tex": OSCILLATING},
        {"compile": {"rerun_limit"}, "citations": set(), "placeholders": set()},
        options={"max_runs": 3},
        runs=3,
    ),
    Paper(
        "fontspec_forced_under_pdflatex",
        {"main.tex": "\\documentclass{article}\n\\usepackage{fontspec}\n\\begin{document}\nHi.\n\\end{document}\n"},
        {"compile": {"latex_error"}, "citations": set(), "placeholders": set()},
        options={"engine": "pdflatex"},
        runs=1,  # the first run already fails: no rerun can change that
    ),
]


CASE_BIB = "@book{Soundex, author = {Robert Russell}, title = {Soundex}, year = {1918}, publisher = {USPO}}\n"
BIBTEX_DOC = (
    "\\documentclass{article}\n\\begin{document}\nIndexed by sound \\cite{soundex}.\n"
    "\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n"
)
BIBER_DOC = (
    "\\documentclass{article}\n\\usepackage{biblatex}\n\\addbibresource{refs.bib}\n\\begin{document}\n"
    "Indexed by sound \\cite{soundex}.\n\\printbibliography\n\\end{document}\n"
)
REPEATED = REFS + "@book{knuth1984, author = {Donald Knuth}, title = {Again}, year = {1986}, publisher = {AW}}\n"

PAPERS += [
    Paper(
        "case_only_key_mismatch_under_bibtex",
        {"main.tex": BIBTEX_DOC, "refs.bib": CASE_BIB},
        {"compile": set(), "citations": {"warning:case_mismatch"}, "placeholders": set()},
        tools=("pdflatex", "bibtex"),
    ),
    Paper(
        "case_only_key_mismatch_under_biber",
        {"main.tex": BIBER_DOC, "refs.bib": CASE_BIB},
        {"compile": set(), "citations": {"unknown_cite"}, "placeholders": set()},
        tools=("pdflatex", "biber"),
    ),
    Paper(
        "repeated_bib_entry",
        {"main.tex": BIBTEX_DOC.replace("soundex", "knuth1984"), "refs.bib": REPEATED},
        {"compile": set(), "citations": {"warning:duplicate_entry"}, "placeholders": set()},
        tools=("pdflatex", "bibtex"),
    ),
]

WRAPPERS = r"""\documentclass{article}
\usepackage{xcolor}
\usepackage{xargs}
\usepackage{todonotes}
\newcommand{\fixme}[1]{\textcolor{red}{FIXME: #1}}
\newcommandx{\jd}[2][1=]{\todo[linecolor=red,#1]{JD: #2}}
\def\tbd#1{\textbf{TBD: #1}}
\begin{document}
The method is complete.
\end{document}
"""
CAMERA_READY = r"""\documentclass{article}
\usepackage[disable]{todonotes}
\begin{document}
We train for ten epochs.\todo{check the schedule}
The results hold.\todo[inline]{add a table}
\end{document}
"""
DEAD_BRANCH = r"""\documentclass{article}
\usepackage{comment}
\newif\ifdraft
\draftfalse
\begin{document}
\ifdraft
(TODO) describe the ablation.
\else
The ablation removes one layer at a time.
\fi
\iffalse FIXME: an old paragraph. \fi
\begin{comment}
TODO: a note to ourselves.
\end{comment}
\end{document}
"""

PAPERS += [
    Paper(
        "todo_wrappers_in_the_preamble",
        {"main.tex": WRAPPERS},
        {"compile": set(), "citations": set(), "placeholders": set()},
    ),
    Paper(
        "todo_wrappers_used_in_the_text",
        {"main.tex": WRAPPERS.replace("is complete.", "is \\fixme{complete?} done.\\jd{units}")},
        {"compile": set(), "citations": set(), "placeholders": {"placeholder"}},
    ),
    Paper(
        "disabled_todonotes",
        {"main.tex": CAMERA_READY},
        {"compile": set(), "citations": set(), "placeholders": set()},
    ),
    Paper(
        "dead_else_branch_with_todo",
        {"main.tex": DEAD_BRANCH},
        {"compile": set(), "citations": set(), "placeholders": set()},
    ),
    Paper(
        "live_branch_with_todo",
        {"main.tex": DEAD_BRANCH.replace("\\draftfalse", "\\drafttrue")},
        {"compile": set(), "citations": set(), "placeholders": {"placeholder"}},
    ),
]

LOCAL_CLASS = r"""\NeedsTeXFormat{LaTeX2e}
\ProvidesClass{labreport}[2024/01/01 our lab's report class]
\LoadClass[11pt]{article}
\RequirePackage{labfonts}
"""
LOCAL_FONTS = "\\ProvidesPackage{labfonts}\n\\RequirePackage{fontspec}\n\\setmainfont{Latin Modern Roman}\n"
ADAPTING_FONTS = (
    "\\ProvidesPackage{labfonts}\n\\RequirePackage{iftex}\n"
    "\\ifXeTeX\\RequirePackage{fontspec}\\else\\RequirePackage[T1]{fontenc}\\fi\n"
)
PLAIN = "\\documentclass{article}\n\\begin{document}\nR\\'esum\\'e of the results.\n\\end{document}\n"

PAPERS += [
    Paper(
        "local_class_loading_fontspec",
        {
            "main.tex": "\\documentclass{labreport}\n\\begin{document}\nUnicode prose: naïve café.\n\\end{document}\n",
            "labreport.cls": LOCAL_CLASS,
            "labfonts.sty": LOCAL_FONTS,
        },
        {"compile": set(), "citations": set(), "placeholders": set()},
        tools=("xelatex",),
        engine="xelatex",
    ),
    Paper(
        "local_style_that_adapts_to_the_engine",
        {
            "main.tex": "\\documentclass{labreport}\n\\begin{document}\nPlain prose.\n\\end{document}\n",
            "labreport.cls": LOCAL_CLASS,
            "labfonts.sty": ADAPTING_FONTS,
        },
        {"compile": set(), "citations": set(), "placeholders": set()},
    ),
    Paper(
        "latexmkrc_pdf_mode_5",
        {"main.tex": PLAIN, "latexmkrc": "# build with xelatex\n$pdf_mode = 5;\n$bibtex_use = 2;\n"},
        {"compile": set(), "citations": set(), "placeholders": set()},
        tools=("xelatex",),
        engine="xelatex",
    ),
    Paper(
        "dot_latexmkrc_commented_mode",
        {"main.tex": PLAIN, ".latexmkrc": "# $pdf_mode = 4;\n$pdf_mode = 1;\n"},
        {"compile": set(), "citations": set(), "placeholders": set()},
    ),
]

# a shared bibliography at the repository's top, one level above the paper
PAPERS += [
    Paper(
        "shared_bibliography_one_level_up_bibtex",
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "refs.bib": REFS,
            "paper/main.tex": "\\documentclass{article}\n\\begin{document}\nAs \\cite{knuth1984} shows.\n"
            "\\bibliographystyle{plain}\n\\bibliography{../refs}\n\\end{document}\n",
        },
        {"compile": set(), "citations": set(), "placeholders": set()},
        tools=("pdflatex", "bibtex"),
        root="paper/main.tex",
    ),
    Paper(
        "shared_bibliography_one_level_up_biber",
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "refs.bib": REFS,
            "paper/main.tex": "\\documentclass{article}\n\\usepackage{biblatex}\n\\addbibresource{../refs.bib}\n"
            "\\begin{document}\nAs \\cite{knuth1984} shows.\n\\printbibliography\n\\end{document}\n",
        },
        {"compile": set(), "citations": set(), "placeholders": set()},
        tools=("pdflatex", "biber"),
        root="paper/main.tex",
    ),
]

# a class that detects the system the way CJK thesis templates do (ustcthesis: `\IfFileExists{/dev/null}`
# means not Windows; a macOS font file means macOS)
PROBING_CLASS = r"""\NeedsTeXFormat{LaTeX2e}
\ProvidesClass{probing}[2024/01/01 a class that probes the system]
\LoadClass{article}
\IfFileExists{/dev/null}{\def\probing@os{unix}}{\ClassError{probing}{Windows: font SimSun is missing}{}}
\IfFileExists{/System/Library/Fonts/Menlo.ttc}{\ClassError{probing}{macOS: font PingFang is missing}{}}{}
"""

PAPERS += [
    Paper(
        "class_probing_dev_null",
        {
            "main.tex": "\\documentclass{probing}\n\\begin{document}\nHello.\n\\end{document}\n",
            "probing.cls": PROBING_CLASS,
        },
        {"compile": set(), "citations": set(), "placeholders": set()},
    ),
]

# figures and inputs beside the paper's folder, as many repositories keep them (ReScience C papers among them)
BLANK_PDF = "%blank-pdf%"  # written as a one-page PDF by `_write`
ONE_LEVEL_UP = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "figures/figure_1.pdf": BLANK_PDF,
    "shared/macros.tex": "\\newcommand{\\method}{Encoder}\n",
}


def _figure_doc(preamble: str, body: str) -> str:
    head = "\\documentclass{article}\n\\usepackage{graphicx}\n"
    return f"{head}{preamble}\\begin{{document}}\n{body}\n\\end{{document}}\n"


PAPERS += [
    Paper(
        "figure_one_level_up",
        {**ONE_LEVEL_UP, "paper/main.tex": _figure_doc("", "\\includegraphics{../figures/figure_1.pdf}")},
        {"compile": set(), "citations": set(), "placeholders": set()},
        root="paper/main.tex",
    ),
    Paper(
        "graphicspath_one_level_up",
        {
            **ONE_LEVEL_UP,
            "paper/main.tex": _figure_doc("\\graphicspath{{../figures/}}\n", "\\includegraphics{figure_1}"),
        },
        {"compile": set(), "citations": set(), "placeholders": set()},
        root="paper/main.tex",
    ),
    Paper(
        "input_one_level_up",
        {**ONE_LEVEL_UP, "paper/main.tex": _figure_doc("\\input{../shared/macros}\n", "The \\method{} works.")},
        {"compile": set(), "citations": set(), "placeholders": set()},
        root="paper/main.tex",
    ),
]

# the ReScience C class: it inputs metadata.tex (which defines the bibliography's name) and declares the
# bibliography through that macro, so only the engine's record (the .bcf) names the file
JOURNAL_CLASS = r"""\NeedsTeXFormat{LaTeX2e}
\ProvidesClass{journal}[2024/01/01 a class naming its bibliography through a macro]
\LoadClass{article}
\input{metadata.tex}
\RequirePackage[backend=biber]{biblatex}
\addbibresource{\articleBIBLIOGRAPHY}
"""

PAPERS += [
    Paper(
        "class_naming_its_bibliography_through_a_macro",
        {
            "journal.cls": JOURNAL_CLASS,
            "metadata.tex": "\\def\\articleBIBLIOGRAPHY{bibliography.bib}\n",
            "bibliography.bib": REFS,
            "main.tex": "\\documentclass{journal}\n\\begin{document}\nAs \\cite{knuth1984} and \\cite{lamport1994} "
            "show, and \\cite{knuth1984} again.\n\\printbibliography\n\\end{document}\n",
        },
        {"compile": set(), "citations": set(), "placeholders": set()},
        tools=("pdflatex", "biber"),
    ),
]


WRAPPERS = (
    "\\documentclass{article}\n\\newcommand{\\shortcite}[1]{\\cite{#1}}\n\\def\\newcite{\\cite}\n\\let\\mycite\\cite\n"
    "\\begin{document}\n\\input{sections/intro}\n\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n"
)
PAPERS += [
    # ACL's old style and apacite-like wrappers defined in the preamble, used in a section (no `unknown_cite #1`)
    Paper(
        "preamble_wrappers_around_cite",
        {"main.tex": WRAPPERS, "refs.bib": REFS,
         "sections/intro.tex": "As \\shortcite{knuth1984} and \\newcite{lamport1994} show, \\mycite{knuth1984}.\n"},
        {"compile": set(), "citations": set(), "placeholders": set()},
        tools=("pdflatex", "bibtex"),
    ),  # fmt: skip
    Paper(
        "preamble_wrapper_citing_an_undefined_key",
        {"main.tex": WRAPPERS, "refs.bib": REFS, "sections/intro.tex": "As \\newcite{fake2025} showed.\n"},
        {"compile": set(), "citations": {"unknown_cite"}, "placeholders": set()},
        tools=("pdflatex", "bibtex"),
    ),
]


def _write(directory: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text == BLANK_PDF:
            from pypdf import PdfWriter

            writer = PdfWriter()
            writer.add_blank_page(72, 72)
            with open(path, "wb") as handle:
                writer.write(handle)
            continue
        path.write_text(text, encoding="utf-8")


def _shown(violation: Violation) -> str:
    return violation.kind if violation.severity == "error" else f"{violation.severity}:{violation.kind}"


@pytest.mark.parametrize("paper", PAPERS, ids=lambda p: p.id)
def test_real_paper_classes(paper: Paper, tmp_path: Path) -> None:
    for tool in paper.tools:
        require_tool(tool)
    _write(tmp_path, paper.files)
    options = CheckOptions(use_cache=False, **paper.options)  # type: ignore[arg-type]
    results = check_manuscript(tmp_path / paper.root, options)
    found = {gate: {_shown(v) for v in result.violations} for gate, result in results.items()}
    assert {gate: found.get(gate) for gate in paper.expect} == paper.expect, results
    for gate, result in results.items():  # warnings never fail an item; errors always do
        assert result.ok == all(_shown(v).startswith("warning:") for v in result.violations), (gate, result)
    assert results["compile"].details["engine"] == paper.engine
    if paper.runs is not None:
        assert results["compile"].details["runs"] == paper.runs


def test_fontspec_under_pdflatex_names_the_magic_comment(tmp_path: Path) -> None:
    require_tool("pdflatex")
    _write(tmp_path, PAPERS[3].files)
    result = check_manuscript(tmp_path / "main.tex", CheckOptions(use_cache=False, engine="pdflatex"))["compile"]
    assert "% !TEX program = xelatex" in result.violations[0].message, result.violations


def test_cache_hit_from_another_directory_reports_the_current_paths(tmp_path: Path) -> None:
    require_tool("pdflatex")
    files = {
        "main.tex": "\\documentclass{article}\n\\begin{document}\n\\input{sections/a}\n\\end{document}\n",
        "sections/a.tex": "Fine.\nBroken \\nosuchmacro here.\n",
    }
    first, second = tmp_path / "clone-1", tmp_path / "clone-2"
    _write(first, files)
    _write(second, files)
    options = CheckOptions(cache_dir=tmp_path / "cache")
    before = check_manuscript(first / "main.tex", options)["compile"]
    after = check_manuscript(second / "main.tex", options)["compile"]
    assert after.details["cached"] and not before.details["cached"]
    assert [(v.file, v.line) for v in before.violations] == [(str(first / "sections" / "a.tex"), 2)]
    assert [(v.file, v.line) for v in after.violations] == [(str(second / "sections" / "a.tex"), 2)]


def test_without_a_pdf_the_source_rules_decide(tmp_path: Path) -> None:
    # the source cannot tell whether \\camerareadyversion is defined; the PDF can
    undecidable = (
        "\\documentclass{article}\n\\begin{document}\n\\ifdefined\\camerareadyversion\n"
        "(TODO) describe the ablation.\n\\else\nThe ablation removes one layer at a time.\n\\fi\n\\end{document}\n"
    )
    _write(tmp_path, {"main.tex": undecidable})
    evidence = evaluate(load_manuscript(tmp_path / "main.tex"), EvidenceConfig())
    assert [(v.token, v.line) for v in evidence.placeholders] == [("TODO", 4)]
    assert evidence.placeholders_in(None) == evidence.placeholders
    assert evidence.placeholders_in("The ablation removes one layer at a time.") == []
    assert evidence.placeholders_in("(TODO) describe the\nabla-\ntion.") == evidence.placeholders
    results = check_manuscript(tmp_path / "main.tex", CheckOptions(use_cache=False))
    assert results["placeholders"].ok and results["placeholders"].details["pdf_checked"]


# IEEEtran's \ifCLASSOPTIONcompsoc, declared the way the class does (IEEEtran's Times needs
# texlive-fonts-recommended, which the test machines need not have)
IEEE_COMPSOC = r"""\documentclass{article}
\newif\ifCLASSOPTIONcompsoc\CLASSOPTIONcompsoctrue
\begin{document}
\title{Robust Encoders}
\maketitle
\section{Introduction}
Encoders~\cite{v1.5} gain 1.5 points over~\cite{lee2019}.
\section{Method}
We train for 12.5 hours.
\ifCLASSOPTIONcompsoc
\section*{Acknowledgments}
\else
\section*{Acknowledgment}
Thanks~\cite{lee2019}, 2.5 times.
\fi
\bibliographystyle{IEEEtran}
\bibliography{refs}
\end{document}
"""
IEEE_BIB = """@misc{v1.5, author = {A. Vee}, title = {Version one and a half}, year = {2021}}
@misc{lee2019, author = {M. Lee}, title = {Baselines}, year = {2019}}
"""


@pytest.mark.parametrize("fault", ["broken_math", "unclosed_env", "unmatched_brace", "fake_cite", "todo"])
def test_inject_places_faults_where_they_break(tmp_path: Path, fault: str) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    _write(tmp_path, {"main.tex": IEEE_COMPSOC, "refs.bib": IEEE_BIB})
    out = tmp_path / "broken.tex"
    cli = [sys.executable, "-m", "pytest_patchwrite.cli", "inject", str(tmp_path / "main.tex"), "--fault", fault]
    proc = subprocess.run([*cli, "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "verified: " in proc.stderr
    broken = out.read_text()
    line = int(proc.stderr.split(":", 2)[1])
    assert not 10 <= line <= 15, f"{fault} went into a conditional branch at line {line}"
    if fault == "broken_math":
        assert "\\cite{v1.5}" in broken and "$1.5 points" in broken  # not inside the key
    (tmp_path / "main.tex").write_text(broken)
    results = check_manuscript(tmp_path / "main.tex", CheckOptions(use_cache=False))
    item = {"fake_cite": "citations", "todo": "placeholders"}.get(fault, "compile")
    assert not results[item].ok, results


def test_inject_says_so_when_no_site_breaks(tmp_path: Path) -> None:
    require_tool("pdflatex")
    only_in_branches = IEEE_COMPSOC.replace("\\section{Introduction}", "").replace("\\section{Method}", "")
    _write(tmp_path, {"main.tex": only_in_branches, "refs.bib": IEEE_BIB})
    cli = [sys.executable, "-m", "pytest_patchwrite.cli", "inject", str(tmp_path / "main.tex"), "--fault", "todo"]
    proc = subprocess.run(cli, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "main.tex" in proc.stderr and "todo: no site" in proc.stderr


def test_fault_case_on_your_own_paper_uses_verified_sites(pytester: pytest.Pytester) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    _write(pytester.path / "paper", {"main.tex": IEEE_COMPSOC, "refs.bib": IEEE_BIB})
    pytester.makeini("[pytest]\npatchwrite_collect = false\npatchwrite_fault_base = paper/main.tex\n")
    pytester.makepyfile(
        """
        def test_repair(fault_case):
            assert not fault_case.fixed()
            assert not 10 <= fault_case.fault.line <= 16, fault_case.fault.line  # never in a conditional branch
            assert "$1.5 points" in fault_case.broken or fault_case.name != "broken_math"
        """
    )
    result = pytester.runpytest_subprocess("--patchwrite-faults", "broken_math,unclosed_env,fake_cite")
    result.assert_outcomes(passed=3)


def test_inject_refuses_a_manuscript_that_does_not_compile(tmp_path: Path) -> None:
    require_tool("pdflatex")
    broken = IEEE_COMPSOC.replace("\\maketitle", "\\maketitle\\nosuchmacro")
    _write(tmp_path, {"main.tex": broken, "refs.bib": IEEE_BIB})
    cli = [sys.executable, "-m", "pytest_patchwrite.cli", "inject", str(tmp_path / "main.tex"), "--fault", "todo"]
    proc = subprocess.run(cli, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "does not compile as it is (undefined_control_sequence at main.tex:5)" in proc.stderr
