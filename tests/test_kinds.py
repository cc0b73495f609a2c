"""Every violation kind the code emits has one entry (pytest_patchwrite/kinds.py), the page shows exactly those
entries, `patchwrite explain` prints them and JSON violations name them in `help`."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_patchwrite.commands.kinddoc import render_markdown
from pytest_patchwrite.kinds import ENTRIES, GROUPS, KINDS
from pytest_patchwrite.model import Violation

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_patchwrite"

# log messages that never become a violation (the compile loop reads them to decide on reruns)
LOG_ONLY = {"rerun", "multiply_defined_label"}

# call sites whose kind is computed: (module, source of the kind expression) -> the kinds it can take.
# The kinds must appear as string literals in that module, so a rename there shows up here.
DYNAMIC = {
    ("flows/selfattest.py", "KIND"): {"attested_by_change"},
    ("gates/evidence.py", "m.kind"): {"undefined_citation", "undefined_reference"},
    ("gates/headrules.py", "kind"): {"suppression_changed", "config_changed"},
    ("flows/prdiff.py", "f'moved_{kind}'"): {"moved_number", "moved_cite"},
    ("flows/prdiff.py", "f'added_{kind}'"): {"added_number", "added_cite"},
    ("flows/prdiff.py", "f'removed_{kind}'"): {"removed_number", "removed_cite"},
    # these pass on a kind that was already collected: from a log message, a violation, an EditError
    ("gates/located.py", "m.kind"): set(),
    ("gates/located.py", "violation.kind"): set(),
    ("gates/located.py", "message.kind"): set(),
    ("engine/texlog.py", "kind"): set(),
    ("flows/transaction.py", "exc.reason"): set(),
}


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _kind_argument(node: ast.Call) -> tuple[ast.expr | None, bool]:
    """Return the kind expression of a Violation/LogMessage/EditError call and whether a warning-only log carries it."""
    name = _callee(node)
    keyword = {k.arg: k.value for k in node.keywords}
    if name in ("Violation", "EditError"):
        return (node.args[0] if node.args else keyword.get("kind", keyword.get("reason"))), False
    if name == "LogMessage":
        if len(node.args) < 2:
            return keyword.get("kind"), False
        severity = node.args[0]
        return node.args[1], isinstance(severity, ast.Name) and severity.id == "WARNING"
    return None, False


def emitted() -> tuple[set[str], set[tuple[str, str]], dict[str, str]]:
    """Return the literal kinds of every call site, the computed call sites, and each module's source."""
    literal: set[str] = set()
    computed: set[tuple[str, str]] = set()
    sources: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        sources[module] = source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and node.name == "_error_kind":
                literal.update(
                    r.value.value
                    for r in ast.walk(node)
                    if isinstance(r, ast.Return)
                    and isinstance(r.value, ast.Constant)
                    and isinstance(r.value.value, str)
                )
            if not isinstance(node, ast.Call):
                continue
            kind, warning = _kind_argument(node)
            if kind is None:
                continue
            branches = [kind.body, kind.orelse] if isinstance(kind, ast.IfExp) else [kind]
            if all(isinstance(b, ast.Constant) and isinstance(b.value, str) for b in branches):
                literal.update(b.value for b in branches if not (warning and b.value in LOG_ONLY))  # type: ignore[attr-defined]
            else:
                computed.add((module, ast.unparse(kind)))
    return literal, computed, sources


def test_every_emitted_kind_has_an_entry_and_every_entry_is_emitted() -> None:
    literal, computed, sources = emitted()
    unknown_sites = computed - set(DYNAMIC)
    assert not unknown_sites, f"a computed violation kind at {sorted(unknown_sites)}: list its kinds in DYNAMIC"
    dynamic: set[str] = set()
    for (module, expression), kinds in DYNAMIC.items():
        assert (module, expression) in computed, f"{module}: no call site with kind {expression} any more"
        for kind in kinds:
            stem = kind.split("_")[0] + "_" if expression.startswith("f'") else kind
            assert stem in sources[module], f"{module} no longer names {kind}"
        dynamic |= kinds
    produced = literal | dynamic
    missing = sorted(produced - set(KINDS))
    assert not missing, f"kinds without an entry in pytest_patchwrite/kinds.py: {missing}"
    stale = sorted(set(KINDS) - produced)
    assert not stale, f"entries for kinds nothing emits: {stale}"


def test_the_scan_finds_what_it_should() -> None:
    # the scan itself can fail: a few kinds from each source must be among what it found
    literal, computed, _ = emitted()
    assert {"unknown_cite", "math_mode", "past_eof", "unclosed_group", "timeout"} <= literal
    assert "rerun" not in literal
    assert ("flows/prdiff.py", "f'moved_{kind}'") in computed


def test_entries_are_complete() -> None:
    assert len({k.name for k in ENTRIES}) == len(ENTRIES), "a kind has two entries"
    for k in ENTRIES:
        assert k.severity in ("error", "warning", "error or warning", "change"), k.name
        assert k.group in GROUPS, f"{k.name}: group {k.group!r} has no section on the page"
        for field in (k.trigger, k.fix, k.suppress):
            assert field.strip().endswith((".", ")")), f"{k.name}: {field!r} is not a sentence"


def test_the_page_is_rendered_from_the_entries() -> None:
    page = (ROOT / "docs" / "violations.md").read_text(encoding="utf-8")
    assert page == render_markdown(), (
        "docs/violations.md is stale: python -m pytest_patchwrite.commands.kinddoc > docs/violations.md"
    )
    for k in ENTRIES:
        assert f"\n### {k.name}\n" in page


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_explain_prints_the_entry() -> None:
    done = _cli("explain", "unattested_number")
    assert done.returncode == 0, done.stderr
    entry = KINDS["unattested_number"]
    assert done.stdout.startswith("unattested_number (numbers, error)")
    assert entry.trigger in done.stdout and entry.fix in done.stdout and entry.suppress in done.stdout
    assert "docs/violations.md#unattested_number" in done.stdout


@pytest.mark.parametrize("kind", ["no_such_kind", "unknown cite", "\x1b[31mred"])
def test_explain_an_unknown_kind_is_exit_2_with_the_list(kind: str) -> None:
    done = _cli("explain", kind)
    assert done.returncode == 2
    first, listing = done.stderr.splitlines()[:2]
    assert first.startswith("patchwrite: error: no violation kind named")
    assert "\x1b" not in done.stderr
    assert set(listing.strip().split(", ")) == set(KINDS)
    assert done.stdout == ""


def test_explain_without_a_kind_lists_every_kind() -> None:
    done = _cli("explain")
    assert done.returncode == 0
    assert [line.split()[0] for line in done.stdout.splitlines()] == [k.name for k in ENTRIES]


def test_json_violations_name_their_entry() -> None:
    data = Violation("unknown_cite", "a.tex", 3, "x", "is not defined").to_json()
    assert data["help"] == "docs/violations.md#unknown_cite"
    assert Violation.from_json(json.loads(json.dumps(data))) == Violation(
        "unknown_cite", "a.tex", 3, "x", "is not defined"
    )
