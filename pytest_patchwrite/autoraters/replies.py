"""Reading a judge's JSON reply: strict, then a fenced block, then a bounded repair, then the schema."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import json_repair
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

from ..errors import InputError
from ..files.inputs import load_json

MAX_REPAIR_CHARS = 200_000  # json-repair walks the text; a runaway reply is an error, not a long wait
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
# a backslash that starts a LaTeX command inside a JSON string ("\cite", "\textbf") is no JSON escape
_LATEX_ESCAPE = re.compile(r"\\(?=[A-Za-z]{2,})(?!u[0-9a-fA-F]{4})")


def schema_errors(data: Any, schema: dict[str, Any]) -> list[str]:
    """Return every schema violation as `path: message` (empty when `data` conforms)."""
    validator = Draft202012Validator(schema)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
            for e in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))]  # fmt: skip


@dataclass
class ParsedReply:
    """A reply read as JSON (or not), how it was read, and why it fails the schema."""

    data: Any = None
    stage: str | None = None  # strict, fenced, braces, latex-escapes, repaired; None: unreadable
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Return whether the reply parsed and validated."""
        return self.stage is not None and not self.errors


def _loads(text: str) -> Any:
    try:
        return load_json(text, "reply", finite=True)
    except InputError:
        return _MISSING


def _finite(data: Any) -> bool:
    # json-repair reads NaN and Infinity as floats; --json output is strict JSON, so such a reply is unreadable
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, (dict, list)):
            stack.extend(item.values() if isinstance(item, dict) else item)
    return True


_MISSING = object()


def _candidates(raw: str) -> list[tuple[str, str]]:
    out = [("strict", raw.strip())]
    out += [("fenced", m.group(1).strip()) for m in _FENCE.finditer(raw)]
    start, end = raw.find("{"), raw.rfind("}")
    if start != -1 and end > start:
        out.append(("braces", raw[start : end + 1]))
    return out


def parse_reply(raw: str, schema: dict[str, Any]) -> ParsedReply:
    """Return the reply as JSON validated against `schema`; an unreadable reply keeps stage None and an error."""
    candidates = _candidates(raw)
    for stage, text in candidates:
        data = _loads(text)
        if data is _MISSING:
            data = _loads(_LATEX_ESCAPE.sub(r"\\\\", text))
            stage = "latex-escapes" if data is not _MISSING else stage
        if data is not _MISSING and isinstance(data, dict):
            return ParsedReply(data, stage, schema_errors(data, schema))
    text = candidates[-1][1] if len(candidates) > 1 else raw
    if "{" in text and len(text) <= MAX_REPAIR_CHARS:
        try:
            data = json_repair.loads(_LATEX_ESCAPE.sub(r"\\\\", text))
        except Exception:  # json-repair promises not to raise; a stranger's reply must not test that promise
            data = None
        if isinstance(data, dict) and data and _finite(data):
            return ParsedReply(data, "repaired", schema_errors(data, schema))
    return ParsedReply(None, None, ["the reply holds no JSON object"])
