"""One notion of "not typeset" for the three locks: `\\iffalse`, known-false `\\newif` branches, `\\iftrue`'s else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import require_tool

from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript
from pytest_patchwrite.tex.latex import scan
from pytest_patchwrite.tex.texconditionals import false_conditionals

BODY = (
    "Hello. \\iffalse See \\cite{zz} TODO 1.5\\%. \\fi\n"
    "\\ifdraft Draft \\cite{yy} 2.5\\% TODO\\fi\n"
    "\\iftrue ok\\else \\cite{ww} 3.5\\%\\fi\n"
)


def paper(tmp_path: Path, setter: str = "\\draftfalse") -> Path:
    (tmp_path / "log.json").write_text(json.dumps({"a": 0.1}))
    (tmp_path / "sec.tex").write_text(BODY)
    root = tmp_path / "main.tex"
    root.write_text(
        "% !patchwrite log = log.json\n\\documentclass{article}\n"
        f"\\newif\\ifdraft {setter}\n\\begin{{document}}\n\\input{{sec}}\n\\end{{document}}\n"
    )
    return root


def found(root: Path) -> set[tuple[str, str]]:
    report = evaluate(load_manuscript(root), EvidenceConfig())
    return {(v.kind, v.token) for v in [*report.citations, *(report.numbers or []), *report.placeholders]}


def test_the_locks_skip_what_tex_never_typesets(tmp_path: Path) -> None:
    assert found(paper(tmp_path)) == set()


def test_a_conditional_set_true_anywhere_is_checked(tmp_path: Path) -> None:
    # \drafttrue in the root: the section's \ifdraft branch is typeset, so its cite and number count
    # (the number shares its sentence with \cite{yy}: reported as that work's, a cited_number)
    assert {("unknown_cite", "yy"), ("cited_number", "2.5\\%")} <= found(paper(tmp_path, "\\drafttrue"))
    assert ("unknown_cite", "zz") not in found(paper(tmp_path, "\\drafttrue"))


def test_false_conditionals_and_scan() -> None:
    assert false_conditionals(["\\newif\\ifdraft\n", "\\ifdraft x\\fi"]) == {"\\ifdraft"}
    assert false_conditionals(["\\newif\\ifdraft\n\\let\\ifdraft\\iftrue"]) == frozenset()
    plain = scan(BODY)
    assert [c.key for c in plain.citations] == ["yy"]  # unknown conditional: kept
    assert [c.key for c in scan(BODY, "", frozenset({"\\ifdraft"})).citations] == []


def test_check_passes_a_paper_whose_dead_branches_hold_cites_and_numbers(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = paper(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", "check", str(root), "--no-cache"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
