"""Judges over the proposers' backends: every call recorded (prompt version, model, raw reply, seconds) and cached."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import InputError
from ..proposers.base import Proposal, ProposerError
from . import prompts
from .cache import ReplyCache, cache_key
from .citation_metrics import Partition
from .references import ReferenceList, judge_listing
from .replies import parse_reply
from .schema_grammar import schema_grammar
from .sections import flatten, review_text
from .sxs import Aggregate, UnreadableVerdict, aggregate, read_winner

MAX_PAPER_CHARS = 120_000  # a judge's context is finite; longer papers are cut, and the call says so
LOCAL_MAX_STRING = 160  # longest free-text field the local model may write (keeps every reply inside max_tokens)


class Backend(Protocol):
    """A chat model: the OpenAI-compatible client or the local llama-cpp model."""

    model_id: str
    parallel: int

    def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> Proposal:
        """Return the raw reply to `messages` (a local model is constrained to `schema`)."""
        ...


class OpenAIBackend:
    """Any OpenAI-compatible server through the proposers' client (bounded retries on 429, 5xx, timeouts)."""

    parallel = 2

    def __init__(self, model: str, base_url: str, timeout: float = 120.0, retries: int = 2, backoff: float = 0.5):
        from ..proposers.openai_compat import OpenAICompatibleProposer

        self.client = OpenAICompatibleProposer(base_url=base_url, model=model, max_tokens=2048, timeout=timeout,
                                               retries=retries, backoff=backoff)  # fmt: skip
        self.model_id = f"openai:{model}"

    def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> Proposal:
        """Return the server's reply at temperature 0."""
        return self.client.complete(messages)


class LocalBackend:
    """The bundled (or a given) GGUF model, its reply constrained by a grammar built from the JSON schema."""

    parallel = 1  # one llama context is not thread-safe

    def __init__(self, model: str | None = None, n_ctx: int = 8192) -> None:
        from ..proposers.local import LocalProposer

        self.model = LocalProposer(model=model, n_ctx=n_ctx)
        self.model_id = f"local:{self.model.model_path.name}"

    def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> Proposal:
        """Return a reply that the schema's grammar admits, with max_tokens it cannot exceed."""
        grammar, longest = schema_grammar(schema, LOCAL_MAX_STRING)
        return self.model.complete(messages, grammar, longest + 16)


@dataclass
class JudgeCall:
    """One recorded call: what was asked (version, model, key), the raw reply and how it read."""

    prompt_version: str
    model: str
    key: str
    raw: str | None
    seconds: float
    cached: bool
    data: Any = None
    stage: str | None = None
    errors: list[str] = field(default_factory=list)
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """Return whether the reply parsed and validated against its schema."""
        return self.stage is not None and not self.errors

    def to_json(self) -> dict[str, Any]:
        """Return the call as recorded in JSON output."""
        return {"prompt_version": self.prompt_version, "model": self.model, "key": self.key, "raw": self.raw,
                "seconds": round(self.seconds, 3), "cached": self.cached, "parse_stage": self.stage,
                "errors": self.errors, "truncated": self.truncated}  # fmt: skip


class Judge:
    """A backend with a reply cache: `call` sends (or replays) one prompt and reads the reply."""

    def __init__(self, backend: Backend, cache: ReplyCache) -> None:
        self.backend = backend
        self.cache = cache
        self.calls_made = 0

    @property
    def model(self) -> str:
        """Return the model id recorded with every call."""
        return self.backend.model_id

    def call(self, messages: list[dict[str, str]], schema: dict[str, Any], version: str) -> JudgeCall:
        """Return the recorded reply to `messages`: from the cache when the same call was made before."""
        key = cache_key(version, self.model, {"messages": messages, "schema": schema})
        record = self.cache.get(key)
        cached = record is not None
        if record is None:
            try:
                reply = self.backend.complete(messages, schema)
            except ProposerError as exc:
                return JudgeCall(version, self.model, key, None, 0.0, False, errors=[f"no reply: {exc}"])
            self.calls_made += 1
            record = {"prompt_version": version, "model": self.model, "raw": reply.raw, "seconds": reply.seconds,
                      "served_by": reply.model, "created": time.time()}  # fmt: skip
            self.cache.put(key, record)
        parsed = parse_reply(str(record["raw"]), schema)
        return JudgeCall(version, self.model, key, str(record["raw"]), float(record.get("seconds", 0.0)), cached,
                         parsed.data, parsed.stage, parsed.errors)  # fmt: skip


def make_judge(spec: str, cache_dir: Path | None = None) -> Judge:
    """Return the judge SPEC names: `local[:GGUF]`, `openai:MODEL@URL` or `openai:MODEL` (URL from the env)."""
    kind, _, rest = spec.partition(":")
    backend: Backend
    if kind == "local":
        try:
            backend = LocalBackend(rest or None)
        except ProposerError as exc:
            raise InputError("--judge", str(exc)) from None
    elif kind == "openai" and rest:
        model, _, url = rest.partition("@")
        url = url or os.environ.get("PATCHWRITE_OPENAI_BASE_URL", "")
        if not model or not url:
            raise InputError("--judge", f"{spec!r}: give openai:MODEL@URL, or set PATCHWRITE_OPENAI_BASE_URL")
        backend = OpenAIBackend(model, url)
    else:
        raise InputError("--judge", f"{spec!r} is not a judge; use local, openai:MODEL@URL or openai:MODEL")
    return Judge(backend, ReplyCache(cache_dir))


def _cut(text: str) -> tuple[str, bool]:
    return (text, False) if len(text) <= MAX_PAPER_CHARS else (text[:MAX_PAPER_CHARS], True)


def paper_text(source: str | Path, aspect: str) -> str:
    """Return what a judge reads of a manuscript: the flattened paper, or only its literature-review sections."""
    if isinstance(source, str):
        return source
    return review_text(source) if aspect == "litreview" else flatten(source)


@dataclass
class SxSResult:
    """Both calls of one pair (A shown first, then B first) and the table row they make."""

    calls: list[JudgeCall]
    winners: list[str | None]
    row: Aggregate | None
    aspect: str

    @property
    def outcome(self) -> str | None:
        """Return the consensus outcome for A (win, tie, loss), None when a verdict was unreadable."""
        return self.row.outcome if self.row else None

    def describe(self) -> str:
        """Return one line per call saying who said what, for failure messages."""
        lines = []
        for order, call, winner in zip((("A", "B"), ("B", "A")), self.calls, self.winners, strict=True):
            said = winner or f"unreadable ({'; '.join(call.errors) or 'no winner'})"
            lines.append(f"call with paper_1={order[0]}, paper_2={order[1]}: winner {said}; "
                         f"{call.model}, prompt {call.prompt_version}{', cached' if call.cached else ''}")  # fmt: skip
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """Return the `rate sxs --json` object."""
        calls = []
        for order, call, winner in zip((["A", "B"], ["B", "A"]), self.calls, self.winners, strict=True):
            entry = {"order": order, "winner": winner, **call.to_json()}
            if winner is None:
                entry["error"] = "; ".join(call.errors) or "unreadable winner"
            calls.append(entry)
        return {"aspect": self.aspect, "calls": calls, "outcome": self.outcome,
                "category_5pt": self.row.category_5pt if self.row else None,
                "category_3pt": self.row.category_3pt if self.row else None}  # fmt: skip


def _winner(call: JudgeCall) -> str | None:
    if not call.ok:
        return None
    try:
        return read_winner(call.data.get("winner"))
    except UnreadableVerdict as exc:
        call.errors.append(str(exc))
        return None


def run_sxs(judge: Judge, a: str | Path, b: str | Path, aspect: str = "paper") -> SxSResult:
    """Return A against B judged twice, the second time with the order swapped (A's view of the verdicts)."""
    if aspect not in prompts.SXS_CRITERIA:
        raise InputError("--aspect", f"unknown aspect {aspect!r}; use paper or litreview")
    (text_a, cut_a), (text_b, cut_b) = _cut(paper_text(a, aspect)), _cut(paper_text(b, aspect))
    orders = [prompts.sxs_messages(text_a, text_b, aspect), prompts.sxs_messages(text_b, text_a, aspect)]
    with ThreadPoolExecutor(max_workers=judge.backend.parallel) as pool:
        calls = list(pool.map(lambda m: judge.call(m, prompts.SXS_SCHEMA, prompts.SXS_VERSION), orders))
    for call in calls:
        call.truncated = cut_a or cut_b
    winners = [_winner(c) for c in calls]
    row = aggregate(winners[0], winners[1]) if None not in winners else None
    return SxSResult(calls, winners, row, aspect)


def score_litreview(judge: Judge, source: str | Path, unique_citations: int, avg_citations: float) -> JudgeCall:
    """Return the judge's literature-review score call (its data is the score JSON when it read)."""
    text, cut = _cut(paper_text(source, "litreview"))
    call = judge.call(prompts.litreview_messages(text, unique_citations, avg_citations), prompts.LITREVIEW_SCHEMA,
                      prompts.LITREVIEW_VERSION)  # fmt: skip
    call.truncated = cut
    return call


@dataclass
class Labels:
    """A judge's P0/P1 partition of one paper's references."""

    partition: Partition
    call: JudgeCall


def label_references(judge: Judge, refs: ReferenceList, context_chars: int = 6000) -> Labels:
    """Return the judge's partition of a paper's references; raise InputError when its reply is unreadable."""
    n = len(refs.references)
    if n == 0:
        return Labels({}, JudgeCall(prompts.LABELS_VERSION, judge.model, "", None, 0.0, False, {}, "strict"))
    context = flatten(refs.path)[:context_chars]
    call = judge.call(prompts.labels_messages(judge_listing(refs), context), prompts.labels_schema(n),
                      prompts.LABELS_VERSION)  # fmt: skip
    if not call.ok:
        raise InputError(refs.path, f"the judge's labels are unreadable: {'; '.join(call.errors)}; raw reply: "
                         f"{(call.raw or '')[:300]!r}")  # fmt: skip
    return Labels({int(k): str(v).upper() for k, v in call.data.items() if str(k).isdigit()}, call)
