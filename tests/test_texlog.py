"""The one log parser's parts: an error's line from its own context line, the token its message names."""

from __future__ import annotations

from pytest_patchwrite.engine.texlog import ERROR, LogMessage, _named_in_message, parse_tex_log

LOG = (
    "! Undefined control sequence.\n! Missing $ inserted.\nl.7 \\foo $x\n\n"
    "! Undefined control sequence.\nl.9 \\bar\\baz\n\n"
    "! LaTeX Error: \\begin{quote} on input line 12 ended by \\end{document}.\nl.30 \\end{document}\n"
)


def test_an_error_is_located_by_its_own_context_line_only() -> None:
    """A context line after the next error belongs to that error; an undefined macro is the context's last one; an
    environment left open is located where it opened, not at its context line."""
    assert parse_tex_log(LOG, "main.tex") == [
        LogMessage(ERROR, "undefined_control_sequence", "Undefined control sequence.", "main.tex", 0, ""),
        LogMessage(ERROR, "math_mode", "Missing $ inserted.", "main.tex", 7, ""),
        LogMessage(ERROR, "undefined_control_sequence", "Undefined control sequence.", "main.tex", 9, "\\baz"),
        LogMessage(
            ERROR,
            "unclosed_environment",
            "LaTeX Error: \\begin{quote} on input line 12 ended by \\end{document}.",
            "main.tex",
            12,
            "quote",
        ),
    ]


def test_the_token_an_error_message_names() -> None:
    assert _named_in_message("missing_file", "File `nope.sty' not found.", "", 3) == ("nope.sty", 3)
    assert _named_in_message("runaway_argument", "File ended while scanning use of \\x.", "", 5) == ("", 5)
    assert _named_in_message("runaway_argument", "Paragraph ended before \\textbf was complete.", "", 5) == (
        "\\textbf",
        5,
    )
    conditional = "(\\end occurred when \\ifx on line 4 was incomplete) \\iffalse; all text was ignored after line 8"
    assert _named_in_message("unclosed_conditional", conditional, "", 2) == ("\\iffalse", 8)
    assert _named_in_message("undefined_control_sequence", "Undefined control sequence.", "\\foo", 2) == ("\\foo", 2)
