"""The proposer protocol: numbered source, experimental log and a defect note in; the model's raw reply out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..edit import DEFAULT_MAX_SPAN, count_lines, number_lines


class ProposerError(RuntimeError):
    """A proposer that could not answer (unreachable server, timeout, missing model); the message says which."""


@dataclass(frozen=True)
class ProposalRequest:
    """What the model is given, as in the paper: the numbered broken source, the log, a one-line note."""

    numbered: str
    log: str
    note: str
    n_lines: int
    max_span: int = DEFAULT_MAX_SPAN

    @classmethod
    def for_text(cls, text: str, log: str, note: str, max_span: int = DEFAULT_MAX_SPAN) -> ProposalRequest:
        """Return the request for a source text: numbered as the proposer sees it, with its line count."""
        return cls(number_lines(text), log, note, count_lines(text), max_span)


@dataclass(frozen=True)
class Proposal:
    """The model's raw reply and how long it took."""

    raw: str
    seconds: float
    model: str


@runtime_checkable
class Proposer(Protocol):
    """Anything that turns a request into a raw reply (expected: one `EDIT N M` block or `DELETE N M`)."""

    name: str

    def propose(self, request: ProposalRequest) -> Proposal:
        """Return the model's raw reply to `request`; raise ProposerError when it cannot answer."""
        ...
