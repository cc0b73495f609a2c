"""Model-proposed edits: the proposer protocol, the prompt contract, an OpenAI-compatible client, a local model."""

from .base import Proposal, ProposalRequest, Proposer, ProposerError
from .factory import make_proposer
from .grammar import edit_grammar
from .prompt import SYSTEM_PROMPT, SYSTEM_PROMPT_VERSION, build_messages

__all__ = [
    "SYSTEM_PROMPT",
    "SYSTEM_PROMPT_VERSION",
    "Proposal",
    "ProposalRequest",
    "Proposer",
    "ProposerError",
    "build_messages",
    "edit_grammar",
    "make_proposer",
]
