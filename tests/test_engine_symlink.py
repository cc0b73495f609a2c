"""An engine reached through a symlink on PATH runs in the sandbox (sandboxcmd.engine_path).

`/usr/local/bin/pdflatex -> /usr/bin/pdflatex`, a TeX Live in /opt linked into /usr/local/bin, or a directory of
links put first on PATH: the sandbox binds only the system paths, so the link itself is not there; the engine is
started by the link nearest the binary that still bears its name (pdflatex tells its format by that name).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.engine import sandboxcmd
from pytest_patchwrite.gates.compile import CompileGate

DOC = "\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n"


def compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bin_dir: Path) -> None:
    """Assert that a document compiles, confined, with `bin_dir` first on PATH."""
    if not sandboxcmd.available():
        pytest.skip(f"no sandbox here: {sandboxcmd.unavailable_reason()}")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert shutil.which("pdflatex") == str(bin_dir / "pdflatex")
    root = tmp_path / "paper" / "main.tex"
    root.parent.mkdir()
    root.write_text(DOC)
    report = CompileGate(root, use_cache=False, warm_starts=False).compile(root)
    assert (report.ok, report.runs) == (True, 1), report.violations


def system_pdflatex() -> str:
    require_tool("pdflatex")
    found = shutil.which("pdflatex")
    assert found is not None
    return os.path.join(os.path.realpath(os.path.dirname(found)), "pdflatex")


def test_a_link_in_a_directory_the_sandbox_does_not_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "pdflatex").symlink_to(system_pdflatex())
    assert sandboxcmd.engine_path(str(tmp_path / "bin" / "pdflatex")) == (system_pdflatex(), [])
    compiles(tmp_path, monkeypatch, tmp_path / "bin")


def test_a_link_to_a_tex_live_outside_usr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # /usr/local/bin/pdflatex -> /opt/texlive/2025/bin/x86_64-linux/pdflatex, laid out in a temp dir
    texlive = tmp_path / "texlive"
    (texlive / "texmf-dist").mkdir(parents=True)
    (texlive / "bin" / "x86_64-linux").mkdir(parents=True)
    engine = texlive / "bin" / "x86_64-linux" / "pdflatex"
    engine.symlink_to(os.path.realpath(system_pdflatex()))  # TeX Live's own pdflatex -> pdftex
    (tmp_path / "local").mkdir()
    (tmp_path / "local" / "pdflatex").symlink_to(engine)
    path, binds = sandboxcmd.engine_path(str(tmp_path / "local" / "pdflatex"))
    assert (path, binds) == (str(engine.parent.resolve() / "pdflatex"), ["--ro-bind", str(texlive), str(texlive)])
    compiles(tmp_path, monkeypatch, tmp_path / "local")


def test_a_link_to_a_binary_in_no_tree_is_bound_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = os.path.realpath(system_pdflatex())  # pdftex, started as pdflatex
    (tmp_path / "tools").mkdir()
    shutil.copy(binary, tmp_path / "tools" / "pdflatex")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "pdflatex").symlink_to(tmp_path / "tools" / "pdflatex")
    path, binds = sandboxcmd.engine_path(str(tmp_path / "bin" / "pdflatex"))
    copy = str((tmp_path / "tools").resolve() / "pdflatex")
    assert (path, binds) == (copy, ["--ro-bind", copy, copy])
    compiles(tmp_path, monkeypatch, tmp_path / "bin")
