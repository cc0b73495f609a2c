"""Number scanner cases from real papers (issue 18): each printed number is one token, read at its value.

Each case is a way real papers print numbers: scientific notation with `{\\times}`/`\\cdot`,
siunitx input, en-dash ranges, thousands separators, asymmetric intervals in scripts, and
URLs/DOIs that hold no number at all.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript
from pytest_patchwrite.tex.latex import scan

# (source, [(printed text, value, percent)]); the value's exponent is its printed precision
CASES = [
    # scientific notation is one number, whatever sits between mantissa and power
    (r"$7.0{\times}10^{-3}$", [(r"7.0{\times}10^{-3}", "0.0070", False)]),
    (r"$7.0\times 10^{-3}$", [(r"7.0\times 10^{-3}", "0.0070", False)]),
    (r"$7.0 \cdot 10^{-3}$", [(r"7.0 \cdot 10^{-3}", "0.0070", False)]),
    (r"$7.0\,\cdot\,10^{ -3 }$", [(r"7.0\,\cdot\,10^{ -3 }", "0.0070", False)]),
    (r"$7.0{\cdot}10^{-3}$, 7.0×10^{-3}", [(r"7.0{\cdot}10^{-3}", "0.0070", False), ("7.0×10^{-3}", "0.0070", False)]),
    (r"$2.5 \times 10^{3}$ steps", [(r"2.5 \times 10^{3}", "2.5e3", False)]),
    (r"a rate of $10^{-4}$", [("10^{-4}", "1e-4", False)]),
    (
        r"\num{7e-3} and \num{7.0e-3} and \num{9,95 d-3}",
        [("7e-3", "7e-3", False), ("7.0e-3", "0.0070", False), ("9,95 d-3", "0.00995", False)],
    ),
    # en-dash ranges: two positive numbers; a percent sign on the second end covers the first
    (r"gains of 8--15\% overall", [("8", "8", True), (r"15\%", "15", True)]),
    (
        r"gains of $8$--$15\%$ and 0.5--1.5 points",
        [("8", "8", True), (r"15\%", "15", True), ("0.5", "0.5", False), ("1.5", "1.5", False)],
    ),
    (
        "from 8\u201315\\% and 2\\textendash 3\\%",
        [("8", "8", True), ("15\\%", "15", True), ("2", "2", True), ("3\\%", "3", True)],
    ),
    (r"a drop of $-15\%$ and [-2, 3]", [(r"-15\%", "-15", True), ("-2", "-2", False), ("3", "3", False)]),
    # thousands separators belong to the number
    (
        r"$\pm42{,}930.5$ and 42\,930.5 and 42,930.5",
        [("42{,}930.5", "42930.5", False), (r"42\,930.5", "42930.5", False), ("42,930.5", "42930.5", False)],
    ),
    (r"$1{\,}000{\,}000$ runs", [(r"1{\,}000{\,}000", "1000000", False)]),
    (
        r"\num{42 930.5} and \num{12345} and \num{0,5}",
        [("42 930.5", "42930.5", False), ("12345", "12345", False), ("0,5", "0.5", False)],
    ),
    # after a relation, an operator or any control word the digits are a number (TeX ends the word at the digit);
    # a macro of the paper's own that prints a minus makes it negative
    (
        r"$\approx0.5$, $\sim 3.5$, $\leq2.5$; with \newcommand{\m}{-}: \m0.02",
        [("0.5", "0.5", False), ("3.5", "3.5", False), ("2.5", "2.5", False), ("0.02", "-0.02", False)],
    ),  # fmt: skip
    # sub/superscripts (indices, exponents, asymmetric offsets): skipped, signed and unsigned alike
    (r"$91.4^{+7.8 \cdot 10^{3}}_{-6.6 \cdot 10^{3}}$", [("91.4", "91.4", False)]),
    (r"$91.4^{7.8 \cdot 10^{3}}_{6.6 \cdot 10^{3}}$", [("91.4", "91.4", False)]),
    (r"$0.91^{+0.02}_{-0.03}$ and $0.91^{0.02}_{0.03}$", [("0.91", "0.91", False), ("0.91", "0.91", False)]),
    (r"$x^{-1}$, $W_{-0.5}$, $a_{+2.5}$", []),
    # the symmetric interval is prose: both numbers are read
    (r"$91.4 \pm 0.3$", [("91.4", "91.4", False), ("0.3", "0.3", False)]),
    # URLs, DOIs and arXiv identifiers hold no numbers
    (r"\url{https://example.org/v1.5/data} \href{https://doi.org/10.1145/1.2}{link 2.5}", [("2.5", "2.5", False)]),
    ("see https://example.org/v1.5/runs_0.25.csv for data", []),
    ("see www.example.org/v1.5 for data", []),
    ("In: Proc. NDSS, doi:10.14722/ndss.2024.23 and DOI: 10.1145/3548606.3560583.", []),
    ("available as 10.1145/3548606.3560583 or arXiv:2301.12345v2.", []),
    (r"at https://x.org/a\_b/1.5\%20c and 0.25", [("0.25", "0.25", False)]),
    # a number that opens the file, or a line after a word, is a number
    ("expected to be 1.5 or\n2.5 pages", [("1.5", "1.5", False), ("2.5", "2.5", False)]),
    ("91.4 & 86.9 \\\\", [("91.4", "91.4", False), ("86.9", "86.9", False)]),
    # a definition's argument count and parameters are structure; a number its body prints is a number
    (r"\newcommand{\citeA}[1]{\citet{#1}} \newcommand\two[2][x]{##1 #2}", []),
    (r"\newenvironment{res}[3]{#3}{} \renewcommand{\acc}{91.4\%}", [(r"91.4\%", "91.4", True)]),
]


@pytest.mark.parametrize(("source", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_scanner_case(source: str, expected: list[tuple[str, str, bool]]) -> None:
    found = [(n.text, n.value, n.percent) for n in scan(source).numbers]
    assert found == [(text, Decimal(value), percent) for text, value, percent in expected]
    for (_, value, _), n in zip(expected, scan(source).numbers, strict=True):
        assert n.value.as_tuple().exponent == Decimal(value).as_tuple().exponent, n.text  # the printed precision


def test_offsets_cover_the_printed_token() -> None:
    source = r"A $7.0{\times}10^{-3}$ b \num{1.5 +- 0.2} c 8--15\%"
    for n in scan(source).numbers:
        assert source[n.start : n.end] == n.text


def test_siunitx_numbers_are_siunitx_and_take_percent_from_the_unit() -> None:
    source = r"\SIrange{8}{15}{\percent} \numrange{1.5}{2.5} \qty{3.5}{ms} \num{1.5 +- 0.2} \num{1.23(4)}"
    numbers = scan(source).numbers
    assert [(n.text, n.percent, n.siunitx) for n in numbers] == [
        ("8", True, True), ("15", True, True), ("1.5", False, True), ("2.5", False, True), ("3.5", False, True),
        ("1.5", False, True), ("+- 0.2", False, True), ("1.23", False, True),
    ]  # fmt: skip
    assert numbers[6].value == Decimal("0.2")


PAPER = r"""% !patchwrite log = results.json
\documentclass{article}
\begin{document}
The loss fell to $7.0{\times}10^{-3}$ (and $7.0 \cdot 10^{-3}$, \num{7e-3}) after $4.2 \times 10^{4}$ steps.
Gains were 8--15\% over a budget of $\pm42{,}930.5$ and $91.4^{+7.8 \cdot 10^{3}}_{-6.6 \cdot 10^{3}}$.
Code: https://github.com/example/repo/tree/v2.5; data doi:10.14722/ndss.2024.23 and 10.1145/3548606.3560583.
\end{document}
"""


def test_the_number_lock_reads_each_case_as_the_reader_does(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text(
        '{"loss": 0.007, "steps": 42000, "gain_low": 0.08, "gain_high": 0.15, "budget": 42930.5, "acc": 91.4}'
    )
    root = tmp_path / "main.tex"
    root.write_text(PAPER)
    report = evaluate(load_manuscript(root), EvidenceConfig())
    assert report.numbers == []
    # the same paper with the log's loss changed: the whole number is checked, not its mantissa
    (tmp_path / "results.json").write_text(
        '{"loss": 0.009, "steps": 42000, "gain_low": 0.08, "gain_high": 0.15, "budget": 42930.5, "acc": 91.4}'
    )
    report = evaluate(load_manuscript(root), EvidenceConfig())
    assert [(v.kind, v.line, v.token) for v in report.numbers or []] == [
        ("unattested_number", 4, r"7.0{\times}10^{-3}"),
        ("unattested_number", 4, r"7.0 \cdot 10^{-3}"),
        ("unattested_number", 4, "7e-3"),
    ]
