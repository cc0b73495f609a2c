"""The pytest side of model-proposed edits: `--patchwrite-proposer`, the default hook and the `propose` fixture."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ..edit import DEFAULT_MAX_SPAN
from ..files.inputs import read_text
from ..gates.evidence import EvidenceConfig, evaluate
from ..proposers.base import ProposalRequest, Proposer
from ..snapshot.manuscript import load_manuscript
from ..snapshot.roots import find_root


def add_options(parser: pytest.Parser) -> None:
    """Register the proposer options."""
    group = parser.getgroup("patchwrite")
    group.addoption(
        "--patchwrite-proposer",
        dest="patchwrite_proposer",
        default=None,
        choices=("local", "openai"),
        help="answer pytest_patchwrite_propose with this model (the `propose` fixture)",
    )
    group.addoption(
        "--patchwrite-model",
        dest="patchwrite_model",
        default=None,
        help="GGUF path (local) or model name (openai; server from $PATCHWRITE_OPENAI_BASE_URL)",
    )
    group.addoption("--patchwrite-no-grammar", dest="patchwrite_no_grammar", action="store_true", default=False,
                    help="local proposer: decode without the EDIT grammar")  # fmt: skip


def request_for(target: Any, note: str, max_span: int = DEFAULT_MAX_SPAN) -> ProposalRequest:
    """Return the paper's request for a manuscript copy, a fault case or a path: numbered text, its logs, the note."""
    path = Path(getattr(target, "path", target))
    text = read_text(path)
    report = evaluate(load_manuscript(find_root(path)), EvidenceConfig())
    log = "\n".join(read_text(p) for p in report.log_files)
    return ProposalRequest.for_text(text, log, note, max_span)


class DefaultProposer:
    """The hook implementation behind `--patchwrite-proposer`; the model loads on first use."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._proposer: Proposer | None = None

    def proposer(self) -> Proposer:
        """Return the configured proposer, created once per session."""
        if self._proposer is None:
            from ..proposers import make_proposer

            option = self.config.option
            if option.patchwrite_proposer == "local":
                self._proposer = make_proposer(
                    "local", model=option.patchwrite_model, grammar=not option.patchwrite_no_grammar
                )
            else:
                self._proposer = make_proposer("openai", model=option.patchwrite_model)
        return self._proposer

    @pytest.hookimpl(trylast=True)
    def pytest_patchwrite_propose(self, manuscript: Any, note: str) -> str | None:
        return self.proposer().propose(request_for(manuscript, note)).raw


def configure(config: pytest.Config) -> None:
    """Register the default proposer when one was asked for."""
    if config.option.patchwrite_proposer:
        config.pluginmanager.register(DefaultProposer(config), "patchwrite-proposer")


@pytest.fixture
def propose(request: pytest.FixtureRequest) -> Callable[..., str]:
    """Return `propose(target, note=None)`: the raw reply of the configured proposer (skips when there is none)."""

    def run(target: Any, note: str | None = None) -> str:
        text = note if note is not None else getattr(target, "note", None)
        if text is None:
            raise ValueError("propose(target, note): a note is needed when the target is not a fault_case")
        reply = request.config.hook.pytest_patchwrite_propose(manuscript=target, note=text)
        if reply is None:
            pytest.skip("no proposer: pass --patchwrite-proposer local|openai or implement pytest_patchwrite_propose")
        return str(reply)

    return run
