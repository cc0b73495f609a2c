"""A GBNF grammar per document: only a well-formed EDIT block or DELETE line with a legal range parses."""

from __future__ import annotations

LINE_CHARS = 120
# A reply must end inside max_tokens or its fence never closes. Every token covers at least one byte, so
# bodies are printable ASCII (one byte a character) by default; with `ascii=False` a character may take 4.
FIXED_TOKENS = 32


def tokens_needed(max_body_lines: int, ascii: bool = True) -> int:
    """Return a max_tokens that no reply the grammar admits can exceed."""
    return FIXED_TOKENS + (LINE_CHARS + 10) * max_body_lines * (1 if ascii else 4)


def body_lines_for(max_tokens: int, ascii: bool = True) -> int:
    """Return how many body lines a reply may have so that it always fits in `max_tokens`."""
    return max(1, (max_tokens - FIXED_TOKENS) // ((LINE_CHARS + 10) * (1 if ascii else 4)))


def _rule(n: int) -> str:
    return f"end-{n}"


def edit_grammar(n_lines: int, max_span: int, max_body_lines: int = 6, ascii: bool = True) -> str:
    """Return a GBNF grammar admitting `EDIT N M` (non-empty body) or `DELETE N M` with 1 <= N <= M <= n_lines."""
    if n_lines < 1:
        raise ValueError("a document with no lines cannot be edited")
    # printable ASCII is \x20-\x7E; a line's first visible character is never a backtick (\x60), so no body
    # line can read as the closing fence
    char, visible = ("[ -~\\t]", "[!-_a-~]") if ascii else ("[^\\n]", "[^`\\n \\t]")
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
            # the first body line is not blank (an empty EDIT is the paper's main failure)
            f"body ::= first rest{{0,{max_body_lines - 1}}}",
            f'first ::= [ \\t]{{0,8}} {visible} {char}{{0,{LINE_CHARS}}} "\\n"',
            f'rest ::= ([ \\t]{{0,8}} {visible} {char}{{0,{LINE_CHARS}}})? "\\n"',
        ]
    )
