"""Model-proposed edits: the grammar, the prompt, the OpenAI-compatible client, the bundled local model."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import llama_cpp_server, require_local_model

from pytest_patchwrite.corpus.live import LiveOptions, request_for, run_live_job
from pytest_patchwrite.edit import REASONS, parse_edit
from pytest_patchwrite.proposers import SYSTEM_PROMPT_VERSION, ProposerError, build_messages, edit_grammar
from pytest_patchwrite.proposers.openai_compat import OpenAICompatibleProposer

# one model at a time, on one worker, one thread: llama.cpp's spinning threads slow 10x when cores are shared
pytestmark = pytest.mark.xdist_group("llama")
os.environ.setdefault("PATCHWRITE_LLAMA_THREADS", "1")  # read when a model loads, also by subprocesses

JOBS = [
    ("en_vision_01", "fake_cite"),
    ("en_nlp_02", "undefined_cmd"),
    ("zh_med_09", "bad_number"),
    ("en_rl_07", "todo"),
]


def test_grammar_restricts_ranges_to_the_document() -> None:
    grammar = edit_grammar(n_lines=3, max_span=2)
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines())
    assert rules["range"] == '"1 " end-1 | "2 " end-2 | "3 " end-3'
    assert (rules["end-1"], rules["end-2"], rules["end-3"]) == ('"1" | "2"', '"2" | "3"', '"3"')
    assert rules["root"] == "edit | delete"
    with pytest.raises(ValueError):
        edit_grammar(0, 40)


def test_token_budget_covers_the_longest_reply() -> None:
    from pytest_patchwrite.proposers.grammar import LINE_CHARS, body_lines_for, tokens_needed

    for lines in range(1, 10):
        longest = len("```EDIT 999 999\n") + lines * (8 + 1 + LINE_CHARS + 1) + 3
        assert tokens_needed(lines) >= longest  # one token per character at worst
        assert body_lines_for(tokens_needed(lines)) == lines


def test_prompt_contract() -> None:
    _, request = request_for("en_vision_01", "fake_cite")
    system, user = build_messages(request)
    assert SYSTEM_PROMPT_VERSION == "1"
    assert "DELETE N M" in system["content"] and "M - N + 1 <= 40" in system["content"]
    assert user["content"].startswith(f"Defect: {request.note}")
    assert '"accuracy": 91.4' in user["content"] and " 1 | % !patchwrite log" in user["content"]
    assert "lee2019" not in request.note and "fake2024" not in request.note  # the defect, not the fix


# -- the OpenAI-compatible client against misbehaving HTTP peers on loopback ----------------------------------


class _Peer(http.server.BaseHTTPRequestHandler):
    mode = "ok"
    hits = 0
    content = "DELETE 1 1"

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        type(self).hits += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.mode == "slow":
            time.sleep(2)
        if self.mode == "500":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"internal error")
            return
        body = json.dumps({"model": "peer", "choices": [{"message": {"content": self.content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def peer() -> Iterator[tuple[str, type[_Peer]]]:
    handler = type("Peer", (_Peer,), {"hits": 0, "mode": "ok"})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    server.shutdown()
    server.server_close()


def test_client_reads_a_reply(peer: tuple[str, type[_Peer]]) -> None:
    url, handler = peer
    _, request = request_for("en_vision_01", "todo")
    proposal = OpenAICompatibleProposer(base_url=url, timeout=5).propose(request)
    assert (proposal.raw, proposal.model, handler.hits) == ("DELETE 1 1", "peer", 1)


def test_client_retries_a_500_then_fails_clearly(peer: tuple[str, type[_Peer]]) -> None:
    url, handler = peer
    handler.mode = "500"
    _, request = request_for("en_vision_01", "todo")
    with pytest.raises(ProposerError, match=r"/v1/chat/completions: HTTP 500 .* after 3 attempt\(s\)"):
        OpenAICompatibleProposer(base_url=url, timeout=5, retries=2, backoff=0.01).propose(request)
    assert handler.hits == 3


def test_client_timeout_is_clear(peer: tuple[str, type[_Peer]]) -> None:
    url, handler = peer
    handler.mode = "slow"
    _, request = request_for("en_vision_01", "todo")
    with pytest.raises(ProposerError, match=r"no answer within 0.3 s after 1 attempt"):
        OpenAICompatibleProposer(base_url=url, timeout=0.3, retries=0).propose(request)


def test_client_refused_connection_is_clear() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _, request = request_for("en_vision_01", "todo")
    with pytest.raises(ProposerError, match=r"cannot connect .*refused.* after 2 attempt"):
        OpenAICompatibleProposer(base_url=f"http://127.0.0.1:{port}/v1", retries=1, backoff=0.01).propose(request)


# -- the bundled local model -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_grammar():
    require_local_model()
    from pytest_patchwrite.proposers.local import LocalProposer

    # two body lines at most keep the test quick; the grammar's guarantees do not depend on the bound
    return LocalProposer(grammar=True, max_body_lines=2)


def test_grammar_constrained_replies_always_parse(local_grammar, tmp_path: Path) -> None:
    for doc_id, fault in JOBS:
        _, request = request_for(doc_id, fault)
        raw = local_grammar.propose(request).raw
        edit = parse_edit(raw, request.n_lines, request.max_span)  # raises on any grammar failure
        assert 1 <= edit.start <= edit.end <= request.n_lines
        record = run_live_job(local_grammar, doc_id, fault, LiveOptions(), tmp_path)
        assert record["parse_ok"] is True and record["raw"]


def test_free_replies_are_classified_never_crash(tmp_path: Path) -> None:
    require_local_model()
    from pytest_patchwrite.proposers.local import LocalProposer

    free = LocalProposer(grammar=False, max_tokens=160)
    for doc_id, fault in JOBS[:2]:
        record = run_live_job(free, doc_id, fault, LiveOptions(), tmp_path)
        assert isinstance(record["parse_ok"], bool) and isinstance(record["raw"], str)
        if not record["parse_ok"]:
            assert record["reason"] in REASONS


def test_live_stress_cli_writes_the_table_and_resumes(tmp_path: Path) -> None:
    require_local_model()
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", "live-stress", "--out", str(tmp_path), "--limit", "2",
           "--docs", "en_vision_01", "--faults", "fake_cite,todo", "--max-tokens", "300"]  # fmt: skip
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    summary = json.loads((tmp_path / "llm_edit_summary.json").read_text())
    assert summary["n"] == 2 and summary["parse_ok"] == 1.0 and summary["grammar"] is True  # fits 300 tokens
    assert summary["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert set(summary["fallback_by_cause"]) == {"parse", "compile", "evidence", "proposer"}
    journal = (tmp_path / "jobs.jsonl").read_text()
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0
    assert (tmp_path / "jobs.jsonl").read_text() == journal  # resumed: no second model call
    assert set(json.loads((tmp_path / "llm_edit_slices.json").read_text())["fault"]) == {"fake_cite", "todo"}


def test_openai_client_against_llama_cpp_server(tmp_path: Path) -> None:
    with llama_cpp_server(tmp_path) as url:
        _, request = request_for("en_vision_01", "fake_cite")
        proposal = OpenAICompatibleProposer(base_url=url, timeout=120, max_tokens=128).propose(request)
        assert isinstance(proposal.raw, str) and proposal.raw.strip()
        assert proposal.seconds > 0


def test_propose_fixture_with_the_local_model(pytester: pytest.Pytester) -> None:
    require_local_model()
    pytester.makeini("[pytest]\npatchwrite_collect = false\n")
    pytester.makepyfile(
        test_live="""
        def test_model_repair(fault_case, propose, try_patch):
            reply = propose(fault_case)
            assert isinstance(reply, str) and reply.strip()
            result = try_patch(fault_case.path, reply, gates=fault_case.gates)
            assert result.stage != "parse"
        """
    )
    result = pytester.runpytest_subprocess("--patchwrite-proposer", "local", "-k", "en_vision_01-fake_cite")
    result.assert_outcomes(passed=1)
    skipped = pytester.runpytest_subprocess("-k", "en_vision_01-fake_cite", "-rs")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*no proposer: pass --patchwrite-proposer*"])


def test_propose_apply_runs_the_proposal_through_the_gates(peer: tuple[str, type[_Peer]], tmp_path: Path) -> None:
    from pytest_patchwrite.cli import main

    url, _handler = peer
    paper = tmp_path / "notes.tex"
    paper.write_text("TODO remove me\nkept\n")
    args = ["propose", str(paper), "--note", "a placeholder", "--apply", "--proposer", "openai", "--base-url", url,
            "--model", "peer", "--no-compile-gate", "--no-evidence-gate"]  # fmt: skip
    assert main(args) == 0
    assert paper.read_text() == "kept\n"


def test_propose_prints_the_reply_escaped_and_applies_it_as_it_came(
    peer: tuple[str, type[_Peer]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_patchwrite.cli import main

    url, handler = peer
    # a reply echoing what a manuscript can plant: a screen clear, a workflow command, a tab, a BEL
    handler.content = "```EDIT 1 1\n\x1b[2J\tkept\x07\n::stop-commands::x\n```"
    paper = tmp_path / "notes.tex"
    paper.write_text("TODO remove me\nkept\n")
    args = ["propose", str(paper), "--note", "a placeholder", "--apply", "--proposer", "openai", "--base-url", url,
            "--model", "peer", "--no-compile-gate", "--no-evidence-gate"]  # fmt: skip
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out == "```EDIT 1 1\n\\x1b[2J\tkept\\x07\n\\x3a:stop-commands::x\n```\n"
    assert "\x1b" not in err and "\x07" not in err and "(\\x1b, \\x07)" in err
    assert paper.read_text() == "\x1b[2J\tkept\x07\n::stop-commands::x\nkept\n"  # the reply as it came


def test_llama_cpp_leaves_no_unclosed_file_at_exit() -> None:
    require_local_model()
    code = "from pytest_patchwrite.proposers.local import import_llama_cpp; import_llama_cpp()"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}  # the worktree's package
    done = subprocess.run([sys.executable, "-W", "always::ResourceWarning", "-c", code], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert done.returncode == 0 and "ResourceWarning" not in done.stderr, done.stderr
    bare = subprocess.run([sys.executable, "-W", "always::ResourceWarning", "-c", "import llama_cpp"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert bare.stderr.count("ResourceWarning: unclosed file") == 2  # what the import alone leaves: the fix matters
