"""The compile half of the security table: ways a manuscript could earn a verdict it does not deserve.

Each row runs the real engine in the real sandbox. The rows of `test_security.py` ask "did anything
leave the sandbox?"; these ask "is the verdict the manuscript's?": an error in a file of any name
fails the compile, a system probe answers as under latexmk while nothing else of the machine is
readable, a file swapped for a symlink during the copy never brings an outside file in, and a PDF
built to exhaust its reader costs a bounded time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import require_tool

from pytest_patchwrite.gates.compile import CompileGate, CompileReport, _violations
from pytest_patchwrite.texlog import parse_tex_log

BROKEN = "Fine.\n\\undefinedmacroxyz here.\n"


def _root(directory: Path, body: str, preamble: str = "", magic: str = "") -> Path:
    root = directory / "main.tex"
    root.write_text(f"{magic}\\documentclass{{article}}\n{preamble}\\begin{{document}}\n{body}\n\\end{{document}}\n")
    return root


# the name on disk, and how the document inputs it
INPUT_NAMES = [
    ("part.txt", "\\input{part.txt}"),
    ("fig.pgf", "\\input{fig.pgf}"),  # matplotlib's PGF backend output
    ("plot.tikz", "\\input{plot.tikz}"),
    ("part.TEX", "\\input{part.TEX}"),
    ("noext", "\\input{noext}"),
    ("my part.tex", '\\input{"my part"}'),
]


@pytest.mark.parametrize(("name", "command"), INPUT_NAMES, ids=[n for n, _ in INPUT_NAMES])
def test_an_error_in_an_input_of_any_name_fails_at_its_line(name: str, command: str, tmp_path: Path) -> None:
    require_tool("pdflatex")
    (tmp_path / name).write_text(BROKEN)
    root = _root(tmp_path, f"Start.\n{command}\n")
    report = CompileGate(use_cache=False, timeout=60).compile(root)
    assert not report.ok
    first = report.violations[0]
    assert (first.kind, Path(first.file).name, first.line) == ("undefined_control_sequence", name, 2), report
    assert name in report.inputs and "main.tex" in report.inputs  # the engine's record, relative to the root


def test_without_the_engines_record_the_log_parser_misses_those_names(tmp_path: Path) -> None:
    """The self-test of the rows above: the name-pattern parser alone does not see these error lines."""
    log = "(./part.txt\n./part.txt:2: Undefined control sequence.\nl.2 \\undefinedmacroxyz\n)\n"
    assert [m for m in parse_tex_log(log, "main.tex", lambda f: True) if m.file.endswith("part.txt")] == []
    found = parse_tex_log(log, "main.tex", lambda f: True, read=("./part.txt", "main.tex"))
    assert [(m.kind, m.file, m.line) for m in found] == [("undefined_control_sequence", "./part.txt", 2)]
    spaced = "(./my part\n! Undefined control sequence.\nl.2 \\undefinedmacroxyz\n)\n"
    assert parse_tex_log(spaced, "main.tex")[0].file == "main.tex"  # no extension before the space: not a file
    assert parse_tex_log(spaced, "main.tex", read=("./my part",))[0].file == "./my part"


def test_an_error_in_a_system_file_is_located_at_the_root(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = _root(tmp_path, "Hi.", preamble="\\usepackage{fontspec}\n")
    report = CompileGate(use_cache=False, timeout=60, engine="pdflatex").compile(root)
    assert not report.ok
    assert {v.file for v in report.violations} == {str(root.resolve())}, report.violations
    assert "fontspec.sty" in report.violations[0].message


def test_a_non_zero_engine_exit_fails_even_without_an_error_line() -> None:
    clean = CompileReport(ok=False, engine="xelatex", runs=1, pdf_bytes=5000, exit_code=0)
    assert _violations(clean, Path("/p/main.tex"), 60, 5) == []
    driver = CompileReport(ok=False, engine="xelatex", runs=1, pdf_bytes=5000, exit_code=1)
    assert [v.kind for v in _violations(driver, Path("/p/main.tex"), 60, 5)] == ["engine_exit"]


def test_a_driver_failure_fails_the_compile(tmp_path: Path) -> None:
    """xdvipdfmx failing (`Error 256 (driver return code)`) leaves no `!` line, and xelatex exits 1."""
    require_tool("xelatex")
    root = _root(tmp_path, "Hi \\special{pdf:image (nonexist.pdf)}", magic="% !TEX program = xelatex\n")
    report = CompileGate(use_cache=False, timeout=60).compile(root)
    assert not report.ok and report.exit_code == 1, report
