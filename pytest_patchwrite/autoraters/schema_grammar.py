"""A GBNF grammar from a reply's JSON schema: every reply the local model can write parses and validates."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# ASCII printable except `"` and `\`: a string body needs no escapes, and one character is at least one token
_STRING_CHAR = r"[ !#-\[\]-~]"


@dataclass
class _Builder:
    max_string: int
    max_items: int
    rules: dict[str, str] = field(default_factory=dict)

    def add(self, hint: str, body: str) -> str:
        name = "".join(c if c.isalnum() else "-" for c in hint).strip("-").lower() or "value"
        base, n = name, 1
        while name in self.rules and self.rules[name] != body:
            n += 1
            name = f"{base}-{n}"
        self.rules[name] = body
        return name

    def value(self, schema: dict[str, Any], hint: str) -> tuple[str, int]:
        """Return (rule name, longest text it admits) for one schema node."""
        if "enum" in schema:
            literals = [json.dumps(json.dumps(v)) for v in schema["enum"]]
            return self.add(hint, " | ".join(literals)), max(len(json.dumps(v)) for v in schema["enum"])
        kind = schema.get("type", "string")
        kind = kind[0] if isinstance(kind, list) else kind
        if kind == "object":
            return self.object(schema, hint)
        if kind == "array":
            item, longest = self.value(schema.get("items", {"type": "string"}), f"{hint}-item")
            most = min(int(schema.get("maxItems", self.max_items)), self.max_items)
            listed = f'{item} ("," {item}){{0,{most - 1}}}'
            body = f'"[" {listed} "]"' if schema.get("minItems", 0) else f'"[" ({listed})? "]"'
            return self.add(hint, body), 2 + most * (longest + 1)
        if kind in ("integer", "number"):
            low, high = schema.get("minimum"), schema.get("maximum")
            if low == 0 and high == 100:
                return self.add("score", '"100" | [1-9] [0-9] | [0-9]'), 3
            sign = '"-"? ' if low is None or low < 0 else ""
            return self.add(f"{kind}-{'signed' if sign else 'natural'}", f'{sign}("0" | [1-9] [0-9]{{0,3}})'), 5
        if kind == "boolean":
            return self.add("boolean", '"true" | "false"'), 5
        return self.add(f"string-{self.max_string}", f'"\\"" {_STRING_CHAR}{{1,{self.max_string}}} "\\""'), (
            self.max_string + 2
        )

    def object(self, schema: dict[str, Any], hint: str) -> tuple[str, int]:
        properties = schema.get("properties", {})
        required = [k for k in properties if k in schema.get("required", [])]
        parts, longest = [], 2
        for i, key in enumerate(required):
            rule, size = self.value(properties[key], f"{hint}-{key}" if hint != "root" else key)
            literal = json.dumps(("," if i else "") + json.dumps(key) + ":")
            parts.append(f"{literal} {rule}")
            longest += len(key) + 4 + size
        return self.add(hint, '"{" ' + " ".join(parts) + ' "}"'), longest


def schema_grammar(schema: dict[str, Any], max_string: int = 200, max_items: int = 3) -> tuple[str, int]:
    """Return (GBNF grammar, longest reply in characters) for the required fields of `schema`, compact JSON."""
    builder = _Builder(max_string, max_items)
    root, longest = builder.value(schema, "root")
    rules = [f"root ::= {builder.rules[root]}" if root != "root" else ""]
    rules += [f"{name} ::= {body}" for name, body in builder.rules.items() if name != root or root == "root"]
    return "\n".join(r for r in rules if r), longest
