"""TeX Live's own example documents (tests/real_world/): papers latexmk builds cleanly get no failing item."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.flows.check import CheckOptions, check_manuscript

SAMPLES = sorted((Path(__file__).parent / "real_world").glob("*.tex"))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_clean_sample_gets_no_failing_item(sample: Path, tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("biber")
    root = tmp_path / sample.name
    shutil.copyfile(sample, root)
    results = check_manuscript(root, CheckOptions(use_cache=False, timeout=300))
    failing = {gate: r.violations for gate, r in results.items() if not r.ok}
    assert failing == {}, failing
    assert results["compile"].details["runs"] >= 2  # engine, biber, engine: the bibliography was resolved
