"""The PDF text the placeholder check confirms against: real pdflatex output, bounded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.engine.pdftext import pdf_text


@pytest.fixture(scope="module")
def pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_tool("pdflatex")
    work = tmp_path_factory.mktemp("pdftext")
    (work / "doc.tex").write_text(
        "\\documentclass{article}\\begin{document}Hello reader.\\newpage Second page.\\end{document}\n"
    )
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "doc.tex"], cwd=work, capture_output=True, check=True, timeout=120
    )
    return work / "doc.pdf"


def test_text_of_every_page(pdf: Path) -> None:
    text = pdf_text(pdf)
    assert text is not None and "Hello reader." in text and "Second page." in text


@pytest.mark.parametrize(
    "limits",
    [{"max_bytes": 100}, {"max_pages": 1}, {"max_chars": 5}],
    ids=["file-too-large", "too-many-pages", "text-too-long"],
)
def test_past_a_cap_falls_back_to_the_source_rules(pdf: Path, limits: dict[str, int]) -> None:
    assert pdf_text(pdf, **limits) is None


def test_not_a_pdf(tmp_path: Path) -> None:
    (tmp_path / "x.pdf").write_bytes(b"%PDF-1.5\nnot really\n")
    assert pdf_text(tmp_path / "x.pdf") is None
    assert pdf_text(tmp_path / "missing.pdf") is None
    (tmp_path / "dir.pdf").mkdir()
    assert pdf_text(tmp_path / "dir.pdf") is None
