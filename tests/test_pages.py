"""`diff --pages DIR`: the pages a change altered, drawn by the sandboxed pdftoppm, paired by text, boxed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.flows.prdiff import GitBase, diff_manuscript
from pytest_patchwrite.gates.evidence import EvidenceConfig
from pytest_patchwrite.model import Violation
from pytest_patchwrite.pages.pagepair import Page, pair_pages
from pytest_patchwrite.pages.pagesflow import PagesOptions, PagesReport, ShownPage, write_pages
from pytest_patchwrite.pages.pageshtml import render_index

ROOT = Path(__file__).resolve().parent.parent

SECTIONS = [
    ("Setup", "We trained for 41 epochs on four machines and kept the learning rate fixed at 0.003 throughout."),
    ("Results", "The model reached an accuracy of 71.3\\% on the held-out split, against 64.8\\% for the baseline."),
    ("Ablations", "Removing the adapter lowered the score to 68.1\\% while halving the memory footprint."),
    ("Limits", "The study covers 12 languages; tokenisation of the others was not evaluated here."),
]


def paper(sections: list[tuple[str, str]], extra: str = "") -> str:
    body = "".join(
        f"\\section*{{{title}}}\n{text}\n% a note for the authors\n{text.replace('.', ' again.')}\n\\clearpage\n"
        for title, text in sections
    )
    return f"\\documentclass{{article}}\n{extra}\\begin{{document}}\n{body}\\end{{document}}\n"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding a four-page paper of our own (one section per page), committed on `main`."""
    require_tool("pdflatex")
    require_tool("pdftoppm", "poppler-utils")
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "main.tex").write_text(paper(SECTIONS))
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "-c", "user.email=t@example.org", "-c", "user.name=T", "add", "-A")
    git(tmp_path, "-c", "user.email=t@example.org", "-c", "user.name=T", "commit", "-qm", "base")
    return tmp_path


def pages_of(repo: Path, out: Path) -> PagesReport:
    root = repo / "paper" / "main.tex"
    base = GitBase.open(root.parent, "main")
    changes = diff_manuscript(root, base, EvidenceConfig()).changes
    return write_pages(root, base, changes, PagesOptions(out))


def pngs(out: Path) -> list[str]:
    return sorted(p.name for p in out.glob("*.png"))


def test_a_moved_number_draws_exactly_its_page(repo: Path) -> None:
    main = repo / "paper" / "main.tex"
    main.write_text(main.read_text().replace("68.1\\%", "69.4\\%", 1))  # the first mention, on page 3
    out = repo / "pages"
    done = subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", "diff", str(main), "--base", "main", "--pages", str(out),
         "--json"], cwd=repo, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    pages = json.loads(done.stdout)["pages"]
    assert [(p["base_page"], p["page"]) for p in pages["changed"]] == [(3, 3)]
    assert pages["unchanged"] == 3 and pages["same_pixels"] == 0 and not pages["left_out"]
    moved = [c["message"] for c in pages["changed"][0]["changes"]]
    assert moved == ["number 68.1\\% -> 69.4\\% (no experimental log declared)"]
    assert pngs(out) == ["page-003-after.png", "page-003-before.png"]
    index = (out / "index.html").read_text()
    assert 'src="page-003-before.png"' in index and 'src="page-003-after.png"' in index
    assert "68.1\\% -&gt; 69.4\\%" in index
    import numpy
    from PIL import Image

    with Image.open(out / "page-003-after.png") as image:  # the box is drawn in red around the number
        assert max(image.size) == 1400
        rgb = numpy.asarray(image.convert("RGB")).astype(int)
    reds = ((rgb[..., 0] > 200) & (rgb[..., 1] < 60) & (rgb[..., 2] < 60)).sum()
    assert reds > 50


def test_a_comment_only_edit_draws_nothing(repo: Path) -> None:
    main = repo / "paper" / "main.tex"
    main.write_text(main.read_text().replace("% a note for the authors", "% a longer note: 99.9\\% sure", 1))
    report = pages_of(repo, repo / "pages")
    assert report.shown == [] and report.same_pixels == 0 and report.unchanged == 4
    assert pngs(repo / "pages") == []
    assert "0 changed page(s) drawn; 4 unchanged" in (repo / "pages" / "index.html").read_text()


def test_an_inserted_page_shifts_the_later_ones_and_pairs_by_content(repo: Path) -> None:
    main = repo / "paper" / "main.tex"
    new = ("Motivation", "Readers asked why the adapter exists at all, so this page answers that in plain words.")
    main.write_text(paper([SECTIONS[0], new, *SECTIONS[1:]]))
    report = pages_of(repo, repo / "pages")
    # base pages 2-4 are the change's pages 3-5 (unnumbered sections): only their page numbers differ, so they are
    # counted, not drawn
    assert [(s.base, s.change) for s in report.shown] == [(None, 2)]
    assert report.unchanged == 4 and (report.base_pages, report.pages) == (4, 5)
    assert pngs(repo / "pages") == ["page-002-after.png"]


def test_pairing_follows_the_text_not_the_page_number() -> None:
    base = [Page(1, "alpha beta gamma 1"), Page(2, "delta epsilon zeta 2"), Page(3, "eta theta iota 3")]
    change = [Page(1, "alpha beta gamma 1"), Page(2, "kappa lambda mu 2"), Page(3, "delta epsilon zeta 3"),
              Page(4, "eta theta iota 4")]  # fmt: skip
    pairs = pair_pages(base, change)
    assert [(p.base.number if p.base else None, p.change.number if p.change else None, p.same) for p in pairs] == [
        (1, 1, True), (None, 2, False), (2, 3, True), (3, 4, True)
    ]  # fmt: skip
    removed = pair_pages(change, base)
    assert [(p.base.number if p.base else None, p.change.number if p.change else None) for p in removed] == [
        (1, 1), (2, None), (3, 2), (4, 3)
    ]  # fmt: skip
    # a moved page whose image changed is drawn
    assert not pair_pages([Page(1, "x y 1", "c", "img1")], [Page(2, "x y 2", "d", "img2")])[0].same


def test_index_html_escapes_hostile_text(tmp_path: Path) -> None:
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    change = Violation("moved_number", str(tmp_path / f"{hostile}.tex"), 3, hostile, f"number 1 -> {hostile}")
    report = PagesReport(tmp_path, [ShownPage(2, 2, f'a"{hostile}.png', "b.png", 1, [change])], unchanged=1,
                         left_out=[hostile], unplaced=[change], note=hostile)  # fmt: skip
    page = render_index(report, tmp_path / f"{hostile}.tex")
    assert "<script" not in page and "<img src=x" not in page and 'onerror=alert(2)>"' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in page
    assert 'src="a&quot;&lt;script&gt;' in page  # the attribute cannot be closed from the file name
    assert "default-src 'none'" in page  # and nothing is loaded or run even if it could


def test_pages_need_the_renderer_and_sane_options(repo: Path) -> None:
    main = repo / "paper" / "main.tex"
    done = subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", "diff", str(main), "--base", "main", "--pages",
         str(repo / "p"), "--pages-size", "9000"], cwd=repo, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == "patchwrite: error: --pages-size: 9000: between 64 and 3000 pixels"


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_pytest_writes_the_pages_once(repo: Path, workers: list[str]) -> None:
    main = repo / "paper" / "main.tex"
    main.write_text(main.read_text().replace("71.3\\%", "72.0\\%", 1))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "paper", "-p", "no:cacheprovider", *workers, "--patchwrite-base", "main",
         "--patchwrite-pages", "pages"], cwd=repo, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout[-2000:]
    assert pngs(repo / "pages") == ["page-002-after.png", "page-002-before.png"], done.stdout[-2000:]
    assert "72.0\\% " in (repo / "pages" / "index.html").read_text()


def test_a_kept_pdf_that_was_tampered_with_is_ignored(tmp_path: Path) -> None:
    from pytest_patchwrite.gates import pdfstore

    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.5 the base's bytes")
    cache, key = tmp_path / "cache", "ab" + "0" * 62
    pdfstore.put(cache, key, pdf)
    assert pdfstore.get(cache, key, tmp_path / "back.pdf") and (tmp_path / "back.pdf").read_bytes() == pdf.read_bytes()
    (cache / "pdf" / "ab" / f"{key}.pdf").write_bytes(b"%PDF-1.5 planted")
    rejected: list[str] = []
    assert not pdfstore.get(cache, key, tmp_path / "again.pdf", rejected)
    assert rejected and not (tmp_path / "again.pdf").exists()


def test_drawing_stops_at_the_time_budget(tmp_path: Path) -> None:
    import time

    from pytest_patchwrite.engine.pagerender import RenderError, render_page

    with pytest.raises(RenderError, match="the time budget for pages ran out"):
        render_page(tmp_path / "none.pdf", 1, tmp_path / "p.png", side=800, deadline=time.monotonic() - 1)
