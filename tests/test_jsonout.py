"""JSON output: violation files relative to the cwd like the terminal, and `numbers` skipped with its reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import require_tool

from pytest_patchwrite.model import Violation


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest_patchwrite.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd)


def paper(tmp_path: Path) -> Path:
    (tmp_path / "paper").mkdir()
    root = tmp_path / "paper" / "main.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\nText \\cite{nokey}.\nMore.\n\\end{document}\n")
    return root


def test_violation_json_file_is_relative_below_the_root_and_absolute_outside() -> None:
    v = Violation("unknown_cite", "/w/paper/main.tex", 3, "k", "is not defined")
    assert v.to_json(Path("/w"))["file"] == "paper/main.tex"
    assert v.to_json(Path("/elsewhere"))["file"] == "/w/paper/main.tex"
    assert v.to_json()["file"] == "/w/paper/main.tex"


def test_check_json_paths_and_skipped_numbers(tmp_path: Path) -> None:
    require_tool("pdflatex")
    paper(tmp_path)
    done = cli("check", "paper/main.tex", "--json", "--no-cache", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    entry = json.loads(done.stdout)["manuscripts"][0]
    assert entry["path"] == "paper/main.tex"
    assert entry["gates"]["citations"]["violations"][0]["file"] == "paper/main.tex"
    assert entry["gates"]["numbers"] == {"ok": True, "violations": [], "skipped": "no experimental log declared"}
    text = cli("check", "paper/main.tex", "--no-cache", cwd=tmp_path).stdout
    assert "paper/main.tex::numbers skipped (no experimental log declared)" in text.splitlines()


def test_apply_json_says_numbers_were_skipped(tmp_path: Path) -> None:
    paper(tmp_path)
    (tmp_path / "reply.txt").write_text("EDIT 4 4\nMore 37.5\\%.\n")
    done = cli("apply", "paper/main.tex", "reply.txt", "--json", "--no-compile-gate", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["accepted"] and out["skipped"] == {"numbers": "no experimental log declared"}
    (tmp_path / "reply.txt").write_text("EDIT 4 4\nMore \\cite{other}.\n")
    rejected = json.loads(
        cli("apply", "paper/main.tex", "reply.txt", "--json", "--no-compile-gate", cwd=tmp_path).stdout
    )
    assert rejected["violations"][0]["file"] == "paper/main.tex"
    text = cli("apply", "paper/main.tex", "reply.txt", "--no-compile-gate", cwd=tmp_path).stdout
    assert "paper/main.tex: numbers not checked: no experimental log declared" in text
