"""The Markdown step summary: each manuscript's items and located violations, shown on a GitHub Actions run page."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import shown
from ..model import display_path

ENV = "GITHUB_STEP_SUMMARY"
# GitHub shows at most 1 MiB of summary per step; a paper with thousands of violations must not push
# every other step's summary off the page
MAX_ROWS = 50
MAX_CELL = 300
ORDER = ("compile", "citations", "numbers", "placeholders", "diff")
MARKS = {"passed": "✅ passed", "failed": "❌ failed", "skipped": "⏭️ skipped", "error": "⚠️ error (environment)"}

# what the recorder hands over: path -> gate -> (outcome, reason) and path -> gate -> the item's JSON result
Outcomes = Mapping[str, Mapping[str, tuple[str, str]]]
Verdicts = Mapping[str, Mapping[str, Mapping[str, Any]]]


def destination(option: str | None, environ: Mapping[str, str]) -> tuple[Path, str] | None:
    """Return where the summary goes and the open mode: `--patchwrite-summary` (rewritten) or $GITHUB_STEP_SUMMARY
    (appended to, as GitHub expects: other steps' tools write there too), or None."""
    if option:
        return Path(option), "w"
    if environ.get(ENV):
        return Path(environ[ENV]), "a"
    return None


def cell(text: str) -> str:
    """Return `text` as one Markdown table cell that renders literally: escaped (HTML and Markdown), one line,
    bounded, no autolinked URL and no `@` mention (shown.markdown)."""
    text = " ".join(str(text).split())
    if len(text) > MAX_CELL:
        text = text[: MAX_CELL - 1] + "…"
    return shown.markdown(text)


def _gates(outcomes: Outcomes) -> list[str]:
    seen = {gate for gates in outcomes.values() for gate in gates}
    return [g for g in ORDER if g in seen] + sorted(seen - set(ORDER))


def _mark(outcome: str, result: Mapping[str, Any] | None) -> str:
    mark = MARKS.get(outcome, outcome)
    count = len(result.get("violations", [])) if result else 0
    return f"{mark} ({count})" if outcome == "failed" and count else mark


def render(outcomes: Outcomes, verdicts: Verdicts, base: Path) -> str:
    """Return the Markdown summary: an overview table (a row per manuscript, a column per item), then per manuscript
    its skipped items' reasons and its violations as a `file:line | item | kind | message` table."""
    gates = _gates(outcomes)
    total = sum(len(g) for g in outcomes.values())
    passed = sum(o == "passed" for g in outcomes.values() for o, _ in g.values())
    lines = [
        "## patchwrite",
        "",
        f"{len(outcomes)} manuscript(s); {passed} of {total} item(s) passed.",
        "",
        "| manuscript | " + " | ".join(gates) + " |",
        "|---" * (len(gates) + 1) + "|",
    ]
    for path in sorted(outcomes):
        items = outcomes[path]
        results = verdicts.get(path, {})
        marks = [_mark(items[g][0], results.get(g, {}).get("result")) if g in items else "" for g in gates]
        lines.append(f"| {cell(display_path(path, base))} | " + " | ".join(marks) + " |")
    for path in sorted(outcomes):
        section = _manuscript_section(outcomes[path], verdicts.get(path, {}), base)
        if section:
            lines += ["", f"### {cell(display_path(path, base))}", "", *section]
    return "\n".join(lines) + "\n"


def _manuscript_section(items: Mapping[str, tuple[str, str]], results: Mapping[str, Any], base: Path) -> list[str]:
    notes = [f"- {cell(gate)} {outcome}: {cell(reason)}" for gate, (outcome, reason) in items.items()
             if reason and (outcome == "skipped" or not results.get(gate))]  # fmt: skip
    rows = []
    for gate in _gates({"": items}):
        result = results.get(gate, {}).get("result") or {}
        for v in result.get("violations", []):
            where = display_path(v["file"], base) if v.get("file") else ""
            location = f"{where}:{v['line']}" if where and v.get("line") else where
            message = f"{v['token']} {v['message']}" if v.get("token") else v.get("message", "")
            rows.append(f"| {cell(location)} | {cell(gate)} | {cell(v['kind'])} | {cell(message)} |")
    table = []
    if rows:
        table = ["| file:line | item | kind | message |", "|---|---|---|---|", *rows[:MAX_ROWS]]
        if len(rows) > MAX_ROWS:
            table.append(f"| … | | | and {len(rows) - MAX_ROWS} more violation(s) |")
    return notes + ([""] if notes and table else []) + table


def annotation(violation: Mapping[str, Any], base: Path) -> str:
    """Return a violation (its JSON object) as a GitHub Actions workflow command: `::error file=F,line=N::text`
    (`::warning` for a warning), escaped as GitHub's toolkit escapes data and properties."""
    file = display_path(violation["file"], base) if violation.get("file") else ""
    file = shown.annotation_property(file)
    text = " ".join(str(violation.get(k) or "") for k in ("kind", "token", "message") if violation.get(k))
    level = "warning" if violation.get("severity") == "warning" else "error"
    line = int(violation.get("line") or 0)
    where = (f" file={file}" + (f",line={line}" if line >= 1 else "")) if file else ""
    return f"::{level}{where}::{shown.annotation_data(text)}"
