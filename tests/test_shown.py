"""The one escaping of printed manuscript text: controls, workflow commands, annotations, Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_patchwrite import shown
from pytest_patchwrite.model import Violation
from pytest_patchwrite.plugin import stepsummary


@pytest.mark.parametrize(
    ("raw", "printed"),
    [
        ("plain key", "plain key"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("del\x7f c1\x85 nul\x00 bel\x07", "del\\x7f c1\\x85 nul\\x00 bel\\x07"),
        ("rtl\u202eevil\u2066 ls\u2028", "rtl\\u202eevil\\u2066 ls\\u2028"),
        ("byte\udcff", "byte\\xff"),  # an undecodable byte, as surrogateescape kept it
        ("über 91.4\\% \\cite{a}", "über 91.4\\% \\cite{a}"),
    ],
)
def test_text_shows_controls_as_escapes(raw: str, printed: str) -> None:
    assert shown.text(raw) == printed


def test_no_printed_line_starts_a_workflow_command() -> None:
    assert shown.line("::stop-commands::TOKEN") == "\\x3a:stop-commands::TOKEN"
    assert shown.line("  ::warning x") == "  \\x3a:warning x"
    assert shown.line("main.tex:3: a::b") == "main.tex:3: a::b"
    violation = Violation("unknown_cite", "", 0, "x\n::stop-commands::TOKEN", "is not defined")
    assert "\n" not in violation.format() and violation.format().startswith("unknown_cite x\\n::stop")
    named = Violation("unknown_cite", "/p/::error::x.tex", 3, "k", "is not defined")
    assert not named.format(Path("/p")).startswith("::")


def test_annotations_escape_data_and_properties() -> None:
    assert shown.annotation_data("50% a\nb\r") == "50%25 a\\nb\\r"  # the newline never reaches GitHub
    assert shown.annotation_property("a,line=999,title=x:y") == "a%2Cline=999%2Ctitle=x%3Ay"
    line = stepsummary.annotation({"file": "/p/a,line=999.tex", "line": 2, "kind": "k", "message": "m\n::x"},
                                  Path("/p"))  # fmt: skip
    assert line == "::error file=a%2Cline=999.tex,line=2::k m\\n::x"


def test_markdown_renders_literally_without_links_or_mentions() -> None:
    cell = stepsummary.cell("see http://evil.example and www.evil.example @octocat <img src=x onerror=y> |a|")
    assert "http://" not in cell and "www." not in cell  # an escaped `:` or `.` splits what GFM autolinks
    assert "@octocat" not in cell and "@&#8203;octocat" in cell
    assert " <img" not in cell and "\\<img" in cell and "\\|a\\|" in cell
    assert stepsummary.cell("a\x1b[31mb\nc") == "a\\\\x1b\\[31mb c"


def test_listing_keeps_tabs_and_escapes_every_other_control_per_line() -> None:
    text = "a\tb\n\x1b[2J\nend\rback\n::stop-commands::x\nbel\x07 csi\x9b31m\n"
    assert shown.listing(text) == "a\tb\n\\x1b[2J\nend\\rback\n\\x3a:stop-commands::x\nbel\\x07 csi\\x9b31m\n"
    assert shown.listing("plain\n\ttabbed\n") == "plain\n\ttabbed\n"  # nothing to escape: the same string
    assert shown.escaped_in(text) == ["\\x1b", "\\r", "\\x07", "\\x9b"]
    assert shown.escaped_in("a\tb\n") == []


HOSTILE = [
    ("\x1b[31mred\x1b[0m", "\\x1b"),  # ANSI colour
    ("bel\x07 nul\x00 del\x7f c1\x9b", "\\x07"),
    ("over\rwrite", "\\r"),  # a carriage return rewrites the line in a terminal or a log viewer
    ("rtl\u202eevil\u2066", "\\u202e"),  # Trojan Source: bidi override and isolate
    ("line\u2028sep", "\\u2028"),
    ("byte\udcff", "\\xff"),
]


@pytest.mark.parametrize(("raw", "escape"), HOSTILE)
def test_sarif_text_shows_controls_and_bidi_as_escapes(raw: str, escape: str) -> None:
    text = shown.sarif(raw)
    assert escape in text
    assert not any(ord(c) < 0x20 and c not in "\t\n" or 0x7F <= ord(c) <= 0x9F for c in text)
    assert not any(c in text for c in "\u2028\u202e\u2066\udcff")


def test_sarif_text_keeps_lines_and_tabs_and_escapes_links() -> None:
    assert shown.sarif("a\tb\nc") == "a\tb\nc"
    assert shown.sarif("[see](https://evil) x](1)") == "\\[see\\](https://evil) x\\](1)"
    assert shown.sarif("::error::x") == "::error::x"  # a SARIF file is no workflow log: nothing to unlead


@pytest.mark.parametrize(("raw", "escape"), HOSTILE)
def test_html_shows_controls_and_bidi_as_escapes(raw: str, escape: str) -> None:
    text = shown.html(raw)
    assert escape in text
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u202e\u2066\udcff" for c in text)


def test_html_injection_is_text() -> None:
    hostile = "\"><script>alert(1)</script><img src=x onerror='y'>&amp;"
    escaped = shown.html(hostile)
    assert "<" not in escaped and ">" not in escaped and '"' not in escaped and "'" not in escaped
    assert escaped.startswith("&quot;&gt;&lt;script&gt;") and escaped.endswith("&amp;amp;")
    assert shown.html("a\nb") == "a\\nb"  # one line, as every printed text


def test_markdown_injection_is_text() -> None:
    hostile = "<img src=x> [x](javascript:alert(1)) **b** `c` | d @team https://evil www.evil.com $x$"
    escaped = shown.markdown(hostile)
    assert escaped == (
        "\\<img src=x\\> \\[x\\](javascript:alert(1)) \\*\\*b\\*\\* \\`c\\` \\| d @&#8203;team "
        "https\\://evil www\\.evil.com \\$x\\$"
    )
    assert "\\x1b" in shown.markdown("\x1b[2J") and "\\u202e" in shown.markdown("\u202e")


def test_explain_names_a_hostile_kind_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_patchwrite import cli

    assert cli.main(["explain", "\x1b[2Jnope\u202e\r::warning x"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err and "\r" not in err
    assert "no violation kind named '\\x1b[2Jnope\\u202e\\r::warning x'" in err


def test_the_pages_note_names_a_hostile_file_escaped() -> None:
    from pytest_patchwrite.gates.report import CompileReport
    from pytest_patchwrite.pages.pagesflow import _failed

    report = CompileReport(ok=False, engine="pdflatex")
    report.violations = [Violation("tex_error", "/p/sec\x1b[2J\u202e.tex", 4, "", "! Undefined control sequence.")]
    assert _failed(report) == "tex_error at sec\\x1b[2J\\u202e.tex:4"
