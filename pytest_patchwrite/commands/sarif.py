"""SARIF 2.1.0 output: every violation a result, so GitHub code scanning (upload-sarif) shows it.

One run per file, tool `patchwrite`; a rule per kind that occurs, described by its entry in kinds.py; each result
located at `file:line` relative to the repository root (`%SRCROOT%`), as upload-sarif expects.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__, shown
from ..files.paths import repository_top
from ..files.tempfiles import write_json
from ..kinds import KINDS, PAGE
from ..model import WARNING, Violation

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
ROOT_ID = "%SRCROOT%"
# SARIF's levels; a diff `change` is information, never a finding of its own
_RULE_LEVEL = {"error": "error", "warning": "warning", "error or warning": "error", "change": "note"}


def _uri(path: Path) -> str:
    return quote(path.as_posix(), safe="/")


def _location(file: str, line: int, root: Path) -> dict[str, Any] | None:
    if not file:
        return None
    real = Path(os.path.realpath(file))
    try:
        artifact = {"uri": _uri(real.relative_to(root)), "uriBaseId": ROOT_ID}
    except ValueError:  # outside the repository: an absolute URI, which code scanning shows without a link
        artifact = {"uri": real.as_uri()}
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if line >= 1:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _rule(kind: str) -> dict[str, Any]:
    entry = KINDS.get(kind)
    if entry is None:
        return {"id": kind, "shortDescription": {"text": kind}, "helpUri": None}
    text = f"What triggers it: {entry.trigger}\nHow to fix it: {entry.fix}\nSuppressing it: {entry.suppress}"
    markdown = (
        f"**What triggers it.** {entry.trigger}\n\n**How to fix it.** {entry.fix}\n\n"
        f"**Suppressing it.** {entry.suppress}\n\n(`patchwrite explain {kind}`; {entry.help})"
    )
    return {
        "id": kind,
        "name": "".join(part.capitalize() for part in kind.split("_")),
        "shortDescription": {"text": entry.trigger.split(". ")[0].rstrip(".") + "."},
        "fullDescription": {"text": entry.trigger},
        "help": {"text": text, "markdown": markdown},
        "defaultConfiguration": {"level": _RULE_LEVEL.get(entry.severity, "error")},
        "properties": {"group": entry.group, "documentation": entry.help},
    }


def repository_root(files: Iterable[str], fallback: Path) -> Path:
    """Return the git work tree holding the first located file (upload-sarif wants paths relative to it)."""
    for file in files:
        if file:
            top = repository_top(Path(os.path.realpath(file)).parent, fallback)
            if top is not None:
                return top
    return Path(os.path.realpath(fallback))


def sarif_log(violations: Iterable[Violation | Mapping[str, Any]], root: Path | None = None) -> dict[str, Any]:
    """Return a SARIF 2.1.0 log with one result per violation (dicts in the `to_json` shape are accepted too)."""
    found = [v if isinstance(v, Violation) else Violation.from_json(v) for v in violations]
    top = root if root is not None else repository_root((v.file for v in found), Path.cwd())
    top = Path(os.path.realpath(top))
    kinds = list(dict.fromkeys(v.kind for v in found))
    rules = [{k: v for k, v in _rule(kind).items() if v is not None} for kind in kinds]
    results = []
    for v in dict.fromkeys(found):  # the diff item repeats what the lock items found
        entry = KINDS.get(v.kind)
        level = "note" if entry and entry.severity == "change" else "warning" if v.severity == WARNING else "error"
        text = shown.sarif(" ".join(part for part in (v.token, v.shown_message(top)) if part) or v.kind)
        result: dict[str, Any] = {
            "ruleId": v.kind,
            "ruleIndex": kinds.index(v.kind),
            "level": level,
            "message": {"text": text},
        }
        location = _location(v.file, v.line, top)
        if location is not None:
            result["locations"] = [location]
        results.append(result)
    driver = {
        "name": "patchwrite",
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": "https://pypi.org/project/pytest-patchwrite/",
        "rules": rules,
        "properties": {"documentation": PAGE},
    }
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {ROOT_ID: {"uri": top.as_uri() + "/"}},
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def write_sarif(path: Path, violations: Iterable[Violation | Mapping[str, Any]], root: Path | None = None) -> bool:
    """Write the SARIF log to `path` (through a temp file); return False when it cannot be written."""
    return write_json(path, sarif_log(violations, root))


def write_session(target: str, verdicts: Mapping[str, Mapping[str, Mapping[str, Any]]], config: Any) -> str:
    """Write the SARIF of a pytest session's item results (the controller's); return '' or why it could not."""
    found = [v for gates in verdicts.values() for data in gates.values() for v in data["result"]["violations"]]
    path = Path(config.invocation_params.dir) / target
    root = repository_root((v["file"] for v in found), Path(config.rootpath))
    if write_sarif(path, found, root):
        return ""
    return f"patchwrite: could not write the SARIF file {path}"
