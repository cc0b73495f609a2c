"""Building a proposer by name: the one module that knows every implementation (they import only `base`)."""

from __future__ import annotations

from typing import Any

from .base import Proposer, ProposerError


def make_proposer(kind: str, **options: Any) -> Proposer:
    """Return the `local` (llama-cpp-python) or `openai` (any OpenAI-compatible server) proposer."""
    if kind == "local":
        from .local import LocalProposer

        return LocalProposer(**options)
    if kind == "openai":
        from .openai_compat import OpenAICompatibleProposer

        return OpenAICompatibleProposer(**options)
    raise ProposerError(f"unknown proposer {kind!r}; use local or openai")
