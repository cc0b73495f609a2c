"""The LaTeX scanner, table-driven: what is a cite key, an empirical number, a placeholder."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pytest_patchwrite.tex.latex import scan
from pytest_patchwrite.tex.placeholders import find as find_placeholders
from pytest_patchwrite.tex.texmask import mask

# (source, the numbers scan() must yield as (printed text, line)); an empty list means none at all
NUMBER_CASES = [
    ("Accuracy was 91.4\\% on the test set.", [("91.4\\%", 1)]),
    ("Accuracy was 91.4 \\% and $91.4\\%$.", [("91.4 \\%", 1), ("91.4\\%", 1)]),
    ("We used 12 layers.", [("12", 1)]),
    ("Loss fell from -0.52 to $-1.3$.", [("-0.52", 1), ("-1.3", 1)]),
    ("It has 1,024 units and 1{,}024 more.", [("1,024", 1), ("1{,}024", 1)]),
    ("A rate of 1.2e3 and $1.2\\times10^{3}$.", [("1.2e3", 1), ("1.2\\times10^{3}", 1)]),
    ("Ranges 10-20 work.", [("10", 1), ("20", 1)]),
    ("Baseline & 68.2 & 41.7 \\\\\nOurs & 91.4 & 86.9 \\\\[2pt]", [("68.2", 1), ("41.7", 1), ("91.4", 2), ("86.9", 2)]),
    ("\\caption{Accuracy of 91.4 under occlusion.}", [("91.4", 1)]),
    ("Text\\footnote{Measured 3.5 times.}", [("3.5", 1)]),
    ("\\SI{91.4}{\\percent} and \\num{0.914} and \\qty{3.5}{ms}", [("91.4", 1), ("0.914", 1), ("3.5", 1)]),
    ("\\num[round-precision=2]{0.9142}", [("0.9142", 1)]),
    # never empirical
    ("\\label{sec:2.1} \\ref{fig:3} \\eqref{eq:1.5} \\cite{smith2020}", []),
    ("\\citep[p.~5]{lee2019} \\citet[see][ch. 2]{a2020}", []),
    ("\\vspace{2.5pt} \\hspace*{-0.5em} \\setlength{\\tabcolsep}{4pt}", []),
    ("\\includegraphics[width=0.45\\linewidth]{fig2.pdf}", []),
    ("A 0.45\\linewidth box and a 2.5pt rule and 3.2 mm gap.", []),
    ("\\documentclass[11pt,a4paper]{article} \\usepackage[margin=1.5in]{geometry}", []),
    ("\\setcounter{section}{3} \\addtocounter{page}{2}", []),
    ("\\input{sections/part2} \\include{ch3} \\url{http://x.org:8080/a1.5}", []),
    ("\\date{November 30, 2026}", []),
    ("As shown in Section 3, Table~2, Fig. 4, Eq.~(5) and Appendix 1.", []),
    ("GPT-4 beats ResNet-50 with L2 loss in 3D at Top-5.", []),
    ("$x^2 + y_1 + z^{10}$", []),
    ("\\begin{tabular}{p{2.5cm}cc} a \\end{tabular}", []),
    ("\\begin{minipage}{0.48\\textwidth} \\end{minipage}", []),
    ("\\multicolumn{2}{c}{Results} \\multirow{3}{*}{A} \\cmidrule(lr){2-3}", []),
    ("\\renewcommand{\\arraystretch}{1.2}", []),
    ("\\begin{tikzpicture} \\draw (0.5,1.5) -- (2.25,3); \\end{tikzpicture}", []),
    ("\\begin{thebibliography}{9}\\bibitem{a} A. 2020, 12(3):1.5--9.\\end{thebibliography}", []),
    ("% 99.9 in a comment\nNo numbers 100\\% sure? Yes: none.", [("100\\%", 2)]),
    ("\\begin{verbatim}\nx = 0.5\n\\end{verbatim}\n\\verb|y=0.7| text", []),
]


@pytest.mark.parametrize(("source", "expected"), NUMBER_CASES, ids=[c[0][:40] for c in NUMBER_CASES])
def test_numbers(source: str, expected: list[tuple[str, int]]) -> None:
    assert [(n.text, n.line) for n in scan(source).numbers] == expected


def test_number_values_and_precision() -> None:
    numbers = scan("a 91.4\\% b -0.52 c 1{,}024 d 1.2e3 e \\SI{5}{\\percent}").numbers
    assert [(n.value, n.decimals, n.percent) for n in numbers] == [
        (Decimal("91.4"), 1, True),
        (Decimal("-0.52"), 2, False),
        (Decimal("1024"), 0, False),
        (Decimal("1.2e3"), 1, False),
        (Decimal("5"), 0, True),
    ]
    assert numbers[-1].siunitx and not numbers[0].siunitx


CITE_CASES = [
    ("\\cite{a}", ["a"]),
    ("\\cite{a, b,c}", ["a", "b", "c"]),
    ("\\citep[see][p.~3]{a} \\citet*{b}", ["a", "b"]),
    ("\\parencite{a} \\textcite{b} \\autocite[5]{c} \\footcite{d} \\supercite{e} \\smartcite{f}", list("abcdef")),
    ("\\citeauthor{a} \\citeyear{b} \\Citet{c} \\Citep{d} \\citealp{e} \\citealt{f}", list("abcdef")),
    ("\\cites[1]{a}[2]{b} \\parencites{c}{d}", ["a", "b", "c", "d"]),
    ("\\nocite{x} \\nocite{*}", ["x", "*"]),
    ("% \\cite{commented}\n\\cite{real}", ["real"]),
    ("\\begin{verbatim}\\cite{verb}\\end{verbatim}", []),
    ("50\\% \\cite{after-percent}", ["after-percent"]),
    ("a\\\\% \\cite{in-comment-after-linebreak}\n\\cite{next}", ["next"]),
    # ACL, apacite (with its <prefix>), harvard, chicago, jurabib
    ("\\shortcite{a} \\newcite{b} \\citealp{c} \\citeposs{d}", list("abcd")),
    ("\\citeA{a} \\citeNP{b} \\cite<e.g.,>[p.~3]{c} \\fullciteA{d} \\shortciteNP{e}", list("abcde")),
    ("\\citeasnoun{a} \\possessivecite{b} \\citeaffixed{c}{see} \\citename{d}", list("abcd")),
    ("\\citeN{a} \\shortciteN{b} \\citeyearNP{c} \\citenotitle{d} \\footcitetitle{e}", list("abcde")),
    # a wrapper of a citation command is one; a definition cites nothing where it stands
    ("\\def\\shortcite{\\cite}\nAs \\shortcite{fake2025} showed.", ["fake2025"]),
    ("\\newcommand{\\mycite}[1]{\\cite{#1}}\n\\mycite{a}", ["a"]),
    ("\\renewcommand\\citeA[1]{\\citep[see][]{#1}} \\citeA{a}", ["a"]),
    ("\\let\\mycite\\cite \\mycite[p.~3]{a,b}", ["a", "b"]),
    ("\\let\\mycite=\\citep \\def\\two{\\mycite} \\two{a}", ["a"]),
    ("\\NewDocumentCommand{\\mc}{m}{\\parencite{#1}} \\mc{a}", ["a"]),
    ("\\newcommand{\\bert}{\\cite{devlin2019}} \\bert{} and \\bert", []),
    ("\\newcommand{\\shortcite}[1]{\\cite{#1}}", []),
    ("\\def\\cmd#1{see \\cite{#1}} \\newenvironment{e}{\\cite{#1}}{}", []),
]


@pytest.mark.parametrize(("source", "keys"), CITE_CASES, ids=[c[0][:40] for c in CITE_CASES])
def test_citations(source: str, keys: list[str]) -> None:
    assert [c.key for c in scan(source).citations] == keys


def test_citation_lines_and_bib_declarations() -> None:
    result = scan("one\n\\cite{a,\n  b}\n\\bibliography{refs,IEEEabrv}\n\\addbibresource[glob]{more.bib}\n\\bibitem{k}")
    assert [(c.key, c.line) for c in result.citations] == [("a", 2), ("b", 3)]
    assert result.bibliographies == [("refs", 4), ("IEEEabrv", 4), ("more.bib", 5)]
    assert result.bibitems == [("k", 6)]


PLACEHOLDER_CASES = [
    ("TODO: finish", ["TODO"]),
    ("See Section ?? and FIXME and XXX and TBD.", ["??", "FIXME", "XXX", "TBD"]),
    ("\\todo{check this}", ["\\todo"]),
    ("Aliens [citation needed].", ["[citation needed]"]),
    ("% TODO in a comment", []),
    ("A todolist, TODOs aside, \\label{TODO} and \\verb|XXX|.", []),
]


# as the reader sees them: definitions print nothing where they stand, their uses do
DEFINITION_CASES = [
    ("\\newcommand{\\fixme}[1]{\\textcolor{red}{FIXME: #1}}\nDone.", []),
    ("\\newcommand{\\fixme}[1]{\\textcolor{red}{FIXME: #1}}\nSee \\fixme{units}.", ["\\fixme"]),
    ("\\newcommandx{\\jd}[2][1=]{\\todo[#1]{JD: #2}}\nOk.", []),
    ("\\newcommandx{\\jd}[2][1=]{\\todo[#1]{JD: #2}}\n\\jd{check}", ["\\jd"]),
    ("\\def\\tbd#1{\\textbf{TBD #1}}\nOk.", []),
    ("\\NewDocumentCommand{\\note}{m}{\\marginpar{TODO #1}}\nA \\note{x}.", ["\\note"]),
    ("\\newenvironment{draft}{\\par XXX}{\\par}\nOk.", []),
    ("\\newcommand\\fx[1]{FIXME #1}\n\\newcommand\\ab[1]{\\fx{AB: #1}}\nSee \\ab{y}.", ["\\ab"]),
    ("\\newcommand\\fx[1]{FIXME #1}\n\\renewcommand\\fx[1]{}\nSee \\fx{y}.", []),
    ("\\renewcommand{\\todo}[2][]{}\nA \\todo{later}.", []),
    ("\\iffalse TODO: old text \\fi Kept.", []),
    ("\\iffalse old \\else TODO: live \\fi", ["TODO"]),
    ("\\ifdraft TODO: draft only \\fi", ["TODO"]),  # the source cannot tell; the PDF decides
    ("A \\iff B, TODO here \\fi", ["TODO"]),
]


@pytest.mark.parametrize(("source", "tokens"), PLACEHOLDER_CASES + DEFINITION_CASES, ids=lambda c: str(c)[:40])
def test_placeholders(source: str, tokens: list[str]) -> None:
    assert [c.token for c in find_placeholders([("x.tex", source)], source)] == tokens


def test_disabled_todonotes_print_nothing() -> None:
    root = "\\documentclass{article}\n\\usepackage[disable]{todonotes}\n\\begin{document}\nA \\todo{later}.\n"
    assert find_placeholders([("main.tex", root)], root) == []
    enabled = root.replace("[disable]", "[colorinlistoftodos]")
    [todo] = find_placeholders([("main.tex", enabled)], enabled)
    assert (todo.token, todo.line, todo.probe) == ("\\todo", 4, "later")


def test_probes_are_the_text_a_reader_sees() -> None:
    source = "TODO: rerun the ablation \\cite{x}.\n\\newcommand\\fx[1]{FIXME #1}\n\\fx{check units here} and \\fx{}"
    probes = [(c.token, c.probe) for c in find_placeholders([("x.tex", source)], source)]
    assert probes == [("TODO", "TODO : rerun the ablation"), ("\\fx", "check units here"), ("\\fx", "FIXME")]


def test_suppression_comments() -> None:
    result = scan("a 0.5 % patchwrite: ignore\nb 0.6 % patchwrite: ignore number\nc 0.7 % patchwrite: ignore cite\n")
    assert result.is_suppressed(1, "number") and result.is_suppressed(1, "cite")
    assert result.is_suppressed(2, "number") and not result.is_suppressed(2, "cite")
    assert not result.is_suppressed(3, "number") and result.is_suppressed(3, "cite")


def test_mask_keeps_lines_and_escaped_percent() -> None:
    text = "50\\% here % gone\n\\\\% also gone\nkept"
    masked, comments = mask(text)
    assert masked.splitlines() == ["50\\% here       ", "\\\\           ", "kept"]
    assert comments == {1: " gone", 2: " also gone"}
