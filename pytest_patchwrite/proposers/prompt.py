"""The prompt contract of the paper, in one place and versioned: change the text, bump the version."""

from __future__ import annotations

from .base import ProposalRequest

SYSTEM_PROMPT_VERSION = "1"
SYSTEM_PROMPT = """You repair one defect in a LaTeX manuscript by changing as few lines as possible.
You see the source with 1-based line numbers ("N | text"), the experimental log that every reported
number must match, and a one-line note that says what is wrong (not how to fix it).

Answer with exactly one block and nothing else:

```EDIT N M
replacement lines
```

It replaces lines N..M (inclusive) by the replacement lines. Rules:
- 1 <= N <= M <= the number of lines, and M - N + 1 <= {max_span}.
- Write the replacement lines without line numbers and without the "N | " prefix.
- Keep every other line, number and citation exactly as it is.
- To remove lines, answer with the single line `DELETE N M` instead of a block. Never send an EDIT with an
  empty body.
"""


def system_prompt(max_span: int) -> str:
    """Return the system prompt for a span limit."""
    return SYSTEM_PROMPT.replace("{max_span}", str(max_span))


def build_messages(request: ProposalRequest) -> list[dict[str, str]]:
    """Return the chat messages for one request."""
    user = (
        f"Defect: {request.note}\n\n"
        f"Experimental log:\n{request.log.strip()}\n\n"
        f"Source ({request.n_lines} lines):\n{request.numbered}"
    )
    return [{"role": "system", "content": system_prompt(request.max_span)}, {"role": "user", "content": user}]
