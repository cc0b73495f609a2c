"""The bundled local model as a judge: a grammar from the reply's JSON schema, so every reply parses and validates."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import llama_cpp_server, require_local_model

from pytest_patchwrite.autoraters.judges import Judge, make_judge, run_sxs
from pytest_patchwrite.autoraters.litreview import SCHEMA as LITREVIEW_SCHEMA
from pytest_patchwrite.autoraters.prompts import SXS_SCHEMA, labels_schema
from pytest_patchwrite.autoraters.schema_grammar import schema_grammar
from pytest_patchwrite.autoraters.sxs import WINNERS

pytestmark = pytest.mark.xdist_group("llama")
os.environ.setdefault("PATCHWRITE_LLAMA_THREADS", "1")

# short papers keep the prompt small: on two shared cores every prompt token costs
A = r"\section{Introduction} We show a frozen tokenizer keeps accuracy at 91.4\% under occlusion~\cite{smith2020}."
B = r"\section{Introduction} Encoders are good. We did experiments. Results are in a table."


def test_schema_grammars_compile_in_llama_cpp() -> None:
    require_local_model()
    from pytest_patchwrite.proposers.local import import_llama_cpp

    llama_cpp = import_llama_cpp()
    for schema in (SXS_SCHEMA, LITREVIEW_SCHEMA, labels_schema(12)):
        grammar, longest = schema_grammar(schema, 160)
        assert llama_cpp.LlamaGrammar.from_string(grammar, verbose=False) is not None
        assert longest > 0


@pytest.fixture(scope="module")
def local_judge(tmp_path_factory: pytest.TempPathFactory) -> Judge:
    require_local_model()
    return make_judge("local", tmp_path_factory.mktemp("judge-cache"))


def test_local_judge_replies_always_parse_and_validate(local_judge: Judge) -> None:
    result = run_sxs(local_judge, A, B)
    for call, winner in zip(result.calls, result.winners, strict=True):
        assert call.ok and call.stage == "strict" and not call.errors, call.raw
        assert winner in WINNERS and call.model == "local:SmolLM2-135M-Instruct.Q4_1.gguf"
    assert result.outcome in ("win", "tie", "loss") and result.row is not None
    again = run_sxs(local_judge, A, B)
    assert [c.cached for c in again.calls] == [True, True] and again.winners == result.winners


def test_openai_client_judges_through_llama_cpp_server(tmp_path: Path) -> None:
    with llama_cpp_server(tmp_path) as url:
        judge = make_judge(f"openai:smollm2@{url}", tmp_path / "cache")
        judge.backend.client.max_tokens = 200  # type: ignore[attr-defined]
        result = run_sxs(judge, A, B)
    # free decoding: a reply is either read (a winner) or an error with the raw reply kept, never a tie
    for call, winner in zip(result.calls, result.winners, strict=True):
        assert call.raw is not None and call.seconds > 0
        assert (winner in WINNERS and call.ok) or (winner is None and call.errors)
    assert (result.outcome is None) == (None in result.winners)
