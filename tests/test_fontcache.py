"""Bitmap fonts made by METAFONT in the sandbox are kept across compiles, rebuilt from TeX Live's sources alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.engine import sandbox, sandboxcmd
from pytest_patchwrite.gates import fontcache
from pytest_patchwrite.gates.compile import CompileGate

T1_DOC = "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\begin{document}\nHello.\n\\end{document}\n"
ECRM = "fonts/pk/ljfour/jknappen/ec/ecrm1000.600pk"


def _require_sandbox() -> None:
    require_tool("bwrap", "bubblewrap")
    require_tool("pdflatex")
    require_tool("mktexpk", "texlive-binaries")
    if not sandboxcmd.available():
        message = f"bubblewrap cannot make a sandbox here: {sandboxcmd.unavailable_reason()}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _t1_paper(tmp_path: Path, body: str = "Hello.") -> Path:
    """Return a T1 root in a fresh directory (skipped where cm-super gives EC outlines: no bitmap font is made)."""
    import subprocess

    if subprocess.run(["kpsewhich", "sfrm1000.pfb"], capture_output=True, text=True).stdout.strip():
        pytest.skip("cm-super is installed: T1 text uses outline fonts, no bitmap font is made")
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text(T1_DOC.replace("Hello.", body))
    return paper / "main.tex"


def test_fonts_made_in_one_compile_are_read_by_the_next(tmp_path: Path) -> None:
    _require_sandbox()
    root = _t1_paper(tmp_path)
    report = CompileGate(use_cache=False).compile(root)
    assert report.ok, report.violations
    cached = fontcache.cache_dir() / ECRM
    assert cached.is_file() and cached.read_bytes()[:2] == b"\xf7\x59"  # a PK file's preamble
    # the next job finds it in its read-only TEXMFHOME and makes nothing
    with fontcache.job_fonts(True) as fonts:
        assert fonts is not None
        outcome = sandbox.run("pdflatex", ["-interaction=nonstopmode"], ["main.tex"], root.parent,
                              deadline=time.monotonic() + 120, fonts=fonts)  # fmt: skip
        assert outcome.returncode == 0
        assert fontcache.made(fonts.var) == []


def test_a_jobs_own_font_bytes_never_reach_the_cache(tmp_path: Path) -> None:
    """What a (hostile) compile wrote below its TEXMFVAR names fonts to build; its bytes are never copied."""
    _require_sandbox()
    with fontcache.job_fonts(True) as fonts:
        assert fonts is not None
        for rel, data in (
            (ECRM, b"POISON"),
            ("fonts/pk/evilmode/jknappen/ec/ecrm1000.600pk", b"POISON"),
            ("tex/latex/evil/article.cls", b"\\POISON"),
            ("fonts/pk/ljfour/x/y/not-a-font.txt", b"POISON"),
        ):
            (fonts.var / rel).parent.mkdir(parents=True, exist_ok=True)
            (fonts.var / rel).write_bytes(data)
        (fonts.var / "fonts/pk/ljfour/jknappen/ec/cmr10.600pk").symlink_to("/etc/hostname")
    cache = fontcache.cache_dir()
    files = sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file())
    assert files == [ECRM]
    assert (cache / ECRM).read_bytes()[:2] == b"\xf7\x59" and b"POISON" not in (cache / ECRM).read_bytes()


def test_a_timeout_while_fonts_are_made_says_so(tmp_path: Path) -> None:
    _require_sandbox()
    # more fonts than mktexpk makes in the deadline on any machine, and a deadline the engine reaches its first
    # font within even on a loaded one (3 s was not: the timeout came before mktexpk). `\fontsize` snaps to the
    # 14 design sizes of the EC fonts (an idle machine made them all within 20 s); each scale of a `\font` is a
    # bitmap font of its own (its own resolution), 400 of them
    sizes = "".join(f"{{\\font\\f=ecrm1000 scaled {n}\\f x}}" for n in range(1001, 1401))
    report = CompileGate(use_cache=False, timeout=20).compile(_t1_paper(tmp_path, sizes))
    assert report.timed_out
    [violation] = report.violations
    assert violation.kind == "timeout" and "generating bitmap fonts (mktexpk" in violation.message
    assert "endless macro loop" not in violation.message
