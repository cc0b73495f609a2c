"""The confirmation of a warm run reads the warm run's cut font map, under the same void rules (gates.confirm).

Each candidate below does something only in a cold first run (HEAD's `.aux` defines `\\pwok`, so the warm run
skips it), and that something is one of the three ways a run can tell the cut map from the whole one: it draws a
font from a bitmap HEAD's run did not open, it reads a file outside the copy HEAD's run did not read, or it meets
a pdfTeX error (a font with no line in the cut map and no bitmap). The warm run stays faithful, so only the
confirmation is void, and the candidate gets the cold check: its verdict is the cold one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.gates import warm
from pytest_patchwrite.gates.compile import CompileGate
from pytest_patchwrite.gates.report import CompileReport

PWOK = (
    "\\documentclass{article}\n\\makeatletter\n\\AtEndDocument{\\immediate\\write\\@mainaux{\\gdef\\string\\pwok{ok}}}\n"
    "\\makeatother\n\\begin{document}\nHello.\n\\end{document}\n"
)


@pytest.fixture(autouse=True)
def _fresh_store() -> None:
    warm.STORE.clear()


def verdict(report: CompileReport) -> tuple[object, ...]:
    return report.ok, report.violations, report.messages if report.ok else None


def warm_then_cold(tmp_path: Path, cold_only: str) -> tuple[CompileGate, CompileReport]:
    """Return the gate and the warm report of a candidate that runs `cold_only` in a cold first run only, after
    asserting its verdict is a cold check's."""
    require_tool("pdflatex")
    root = tmp_path / "main.tex"
    root.write_text(PWOK)
    gate = CompileGate(root, use_cache=False)
    assert gate.compile(root).ok
    candidate = {root: PWOK.replace("Hello.", f"Hello. \\ifx\\pwok\\undefined {cold_only}\\fi")}
    report = gate.compile(root, candidate)
    assert verdict(report) == verdict(gate.compile(root, candidate, warm_start=False))
    return gate, report


@pytest.mark.parametrize(
    "cold_only",
    [
        "\\textbf{Bold.}",  # cmbx10: no line in the cut map, so TeX Live's own 600 dpi bitmap (texlive-base)
        "\\input{ot1cmss.fd}",  # a file of the TeX tree HEAD's run did not read (a package could add map lines)
        "\\textsf{Sans.}",  # cmss10: no line in the cut map and no bitmap, with mktexpk off: a pdfTeX error
    ],
)
def test_a_confirmation_that_tells_the_cut_map_is_void(tmp_path: Path, cold_only: str) -> None:
    if "textbf" in cold_only:
        found = subprocess.run(["kpsewhich", "cmbx10.600pk"], capture_output=True, text=True, check=False)
        assert found.stdout.strip().endswith("cmbx10.pk"), "texlive-base ships cmbx10 as a 600 dpi bitmap"
    gate, report = warm_then_cold(tmp_path, cold_only)
    # the warm run was faithful and confirmed; its confirmation was void, and the candidate got the cold check
    assert (report.start, report.ok) == ("fallback", True)
    assert (gate.maps_cut, gate.maps_void, gate.confirmations, gate.confirmations_failed) == (1, 1, 1, 1)


def test_a_confirmation_on_the_fonts_heads_run_used_stands(tmp_path: Path) -> None:
    gate, report = warm_then_cold(tmp_path, "Cold.")
    assert (report.start, report.ok) == ("warm", True)
    assert (gate.maps_cut, gate.maps_void, gate.confirmations, gate.confirmations_failed) == (1, 0, 1, 0)


def test_a_bitmap_of_a_font_the_whole_map_has_no_line_for_keeps_the_confirmation(tmp_path: Path) -> None:
    # T1 without cm-super: EC fonts are bitmaps under either map. A cold first run draws `??`-style bold that
    # HEAD's run never drew (gpuADMIX: ecbx0800); the bitmap it opens is the one a run with the whole map opens
    require_tool("pdflatex")
    t1 = PWOK.replace("\\makeatletter", "\\usepackage[T1]{fontenc}\n\\makeatletter")
    (tmp_path / "fonts").mkdir()
    other = tmp_path / "fonts" / "main.tex"
    other.write_text(t1.replace("Hello.", "Hello. \\textbf{Bold.}"))  # makes ecrm1000 and ecbx1000 for the cache
    assert CompileGate(other, use_cache=False).compile(other).ok
    root = tmp_path / "main.tex"
    root.write_text(t1)
    gate = CompileGate(root, use_cache=False)
    assert gate.compile(root).ok
    state = warm.STORE.get("", f"pdflatex:{root}", None)
    assert state is not None and state.fonts is not None and "ecbx1000" not in state.fonts.metrics
    candidate = {root: t1.replace("Hello.", "Hello. \\ifx\\pwok\\undefined \\textbf{Bold.}\\fi")}
    report = gate.compile(root, candidate)
    assert verdict(report) == verdict(gate.compile(root, candidate, warm_start=False))
    assert (report.start, report.ok, gate.maps_cut, gate.maps_void, gate.confirmations_failed) == (
        "warm",
        True,
        1,
        0,
        0,
    )
