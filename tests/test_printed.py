"""Masking once per text, and a cap on the violations printed per gate (--json keeps them all)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import require_tool

from pytest_patchwrite.model import MAX_PRINTED, Violation, printed_lines
from pytest_patchwrite.tex import texmask


def test_mask_is_computed_once_per_text_and_its_comments_are_the_callers() -> None:
    text = "a % one\n\\verb|%x| b\n\\begin{verbatim}\n%no\n\\end{verbatim}\nc % two\n"
    first, comments = texmask.mask(text)
    assert first.count("\n") == text.count("\n") and "one" not in first and "%x" not in first
    assert comments == {1: " one", 6: " two"}
    comments[1] = "changed"
    again = texmask.mask(text)
    assert again[0] is first  # the cached result
    assert again[1] == {1: " one", 6: " two"}


def test_printed_lines_caps_with_a_count() -> None:
    violations = [Violation("unknown_cite", "/p/main.tex", n, f"k{n}", "is not defined") for n in range(1, 61)]
    lines = printed_lines(violations, Path("/p"), "--json")
    assert len(lines) == MAX_PRINTED + 1
    assert lines[0] == "main.tex:1: unknown_cite k1 is not defined"
    assert lines[-1] == f"... and {60 - MAX_PRINTED} more unknown_cite (all in --json)"
    assert printed_lines(violations[:3], None, "--json") == [v.format() for v in violations[:3]]


def test_the_cap_counts_per_kind_and_a_binding_mismatch_comes_first() -> None:
    unattested = [Violation("unattested_number", "/p/main.tex", n, f"{n}.5", "fits no log entry") for n in range(99)]
    mismatch = Violation("binding_mismatch", "/p/main.tex", 120, "91.4", "is bound to results.json acc = 0.905")
    stale = Violation("stale_binding", "/p/main.tex", 130, "1.5", "was bound", "warning")
    lines = printed_lines([*unattested[:60], stale, mismatch, *unattested[60:]], Path("/p"), "--json")
    assert lines[0] == "main.tex:120: binding_mismatch 91.4 is bound to results.json acc = 0.905"
    assert sum(line.startswith("main.tex:") and "unattested_number" in line for line in lines) == MAX_PRINTED
    assert "main.tex:130: warning: stale_binding 1.5 was bound" in lines  # another kind: not behind the cap
    assert lines[-1] == f"... and {99 - MAX_PRINTED} more unattested_number (all in --json)"
    touched = printed_lines([*unattested[:5], stale], Path("/p"), "--json", changed=[("/p/main.tex", 130)])
    assert touched[0].startswith("main.tex:130: warning: stale_binding")  # a line the change touched comes next


def test_check_prints_at_most_the_cap_and_json_keeps_all(tmp_path: Path) -> None:
    require_tool("pdflatex")
    body = "\n".join(f"Text \\cite{{key{n}}}." for n in range(MAX_PRINTED + 25))
    root = tmp_path / "main.tex"
    root.write_text(f"\\documentclass{{article}}\n\\begin{{document}}\n{body}\n\\end{{document}}\n")
    command = [sys.executable, "-m", "pytest_patchwrite.cli", "check", "main.tex", "--no-cache"]
    text = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert text.returncode == 1, text.stderr
    cites = [line for line in text.stdout.splitlines() if "unknown_cite" in line and not line.startswith("  ...")]
    assert len(cites) == MAX_PRINTED
    assert "  ... and 25 more unknown_cite (all in --json)" in text.stdout.splitlines()
    data = json.loads(subprocess.run([*command, "--json"], capture_output=True, text=True, cwd=tmp_path).stdout)
    gates = data["manuscripts"][0]["gates"]
    assert sum(v["kind"] == "unknown_cite" for v in gates["citations"]["violations"]) == MAX_PRINTED + 25
