"""A GBNF grammar per document: only a well-formed EDIT block or DELETE line with a legal range parses."""

from __future__ import annotations

LINE_CHARS = 160


def _rule(n: int) -> str:
    return f"end-{n}"


def edit_grammar(n_lines: int, max_span: int, max_body_lines: int = 8) -> str:
    """Return a GBNF grammar admitting `EDIT N M` (non-empty body) or `DELETE N M` with 1 <= N <= M <= n_lines."""
    if n_lines < 1:
        raise ValueError("a document with no lines cannot be edited")
    starts = " | ".join(f'"{n} " {_rule(n)}' for n in range(1, n_lines + 1))
    ends = [
        f"{_rule(n)} ::= " + " | ".join(f'"{m}"' for m in range(n, min(n_lines, n + max_span - 1) + 1))
        for n in range(1, n_lines + 1)
    ]
    return "\n".join(
        [
            "root ::= edit | delete",
            'edit ::= "```EDIT " range "\\n" body "```"',
            'delete ::= "DELETE " range',
            f"range ::= {starts}",
            *ends,
            # the first body line has a visible character; no body line starts with a backtick (a fence)
            f"body ::= first rest{{0,{max_body_lines - 1}}}",
            f'first ::= [ \\t]{{0,8}} [^`\\n \\t] [^\\n]{{0,{LINE_CHARS}}} "\\n"',
            f'rest ::= ([^`\\n] [^\\n]{{0,{LINE_CHARS}}})? "\\n"',
        ]
    )
