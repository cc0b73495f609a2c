"""`diff --pages DIR`: the pages a change altered, drawn before and after, side by side in DIR/index.html.

Both versions are compiled through the compile gate (sandboxed, cached; the base from its own
tree taken with `git archive`), their pages paired by text (pagepair), and only the pairs that
may differ are drawn, by `pdftoppm` inside the sandbox (pagerender). A pair whose pixels differ
gets a before/after PNG with the changed regions boxed (pagepixels); the rest are counted.
Bounded: at most `max_pages` pairs drawn, a long side of at most `side` pixels, one time budget.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import shown
from ..engine import pagerender
from ..engine.pdftext import read_pdf
from ..errors import InputError
from ..files.tempfiles import make_owned_temp_dir, remove_tree
from ..flows import basetree
from ..flows.prdiff import GitBase
from ..gates import pdfstore
from ..gates.compile import CompileGate
from ..gates.mirror import refers_above
from ..gates.report import CompileReport
from ..model import Violation
from ..snapshot.manuscript import load_manuscript
from ..snapshot.snapshot import shared_bibliographies
from . import pagepixels
from .pagepair import Page, Pair, pair_pages, place

_OLD = re.compile(r"^(?:number|cite) (.+?) -> ")


@dataclass
class PagesOptions:
    """How pages are drawn: where, how many, how large, within how long."""

    directory: Path
    max_pages: int = 20
    side: int = 1400
    timeout: float = 60.0  # each compile's, and the drawing's whole budget
    engine: str | None = None
    use_cache: bool = True
    trusted: bool = False
    cache_dir: Path | None = None  # the verdict cache's (default: the user's)


@dataclass
class ShownPage:
    """A pair of pages whose pixels differ, as drawn into the directory."""

    base: int | None  # page numbers, None for an added or removed page
    change: int | None
    before: str | None  # PNG file names in the directory
    after: str | None
    boxes: int
    changes: list[Violation] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Return the page as JSON data."""
        return {"base_page": self.base, "page": self.change, "before": self.before, "after": self.after,
                "boxes": self.boxes, "changes": [c.to_json() for c in self.changes]}  # fmt: skip


@dataclass
class PagesReport:
    """What `--pages` drew, counted and left out."""

    directory: Path
    shown: list[ShownPage] = field(default_factory=list)
    unchanged: int = 0  # pairs whose text and images match: never drawn
    same_pixels: int = 0  # pairs drawn whose pixels matched
    left_out: list[str] = field(default_factory=list)  # pairs not drawn, and why
    unplaced: list[Violation] = field(default_factory=list)  # changes not seen on any drawn page
    base_pages: int = 0
    pages: int = 0
    note: str = ""  # why no pages were paired at all
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Return the report as JSON data (`diff --json`'s `pages`)."""
        return {"directory": str(self.directory), "index": str(self.directory / "index.html"),
                "changed": [s.to_json() for s in self.shown], "unchanged": self.unchanged,
                "same_pixels": self.same_pixels, "left_out": self.left_out,
                "unplaced": [c.to_json() for c in self.unplaced], "base_pages": self.base_pages,
                "pages": self.pages, "note": self.note, "seconds": round(self.seconds, 3)}  # fmt: skip


def check_ready(options: PagesOptions) -> None:
    """Raise InputError when pages cannot be drawn here or the options are out of range."""
    why = pagerender.missing()
    if why:
        raise InputError("--pages", why)
    if options.max_pages < 1:
        raise InputError("--pages-max", f"{options.max_pages}: at least one page")
    if not 64 <= options.side <= pagerender.MAX_SIDE:
        raise InputError("--pages-size", f"{options.side}: between 64 and {pagerender.MAX_SIDE} pixels")


def _compiled_pdf(gate: CompileGate, root: Path, target: Path) -> tuple[CompileReport, bool]:
    """Compile `root`; return (its report, whether its PDF is now at `target`), from the store on a cached verdict."""

    def sink(pdf: Path, key: str) -> None:
        _keep(pdf, target)
        pdfstore.put(gate.cache_dir, key, pdf)

    gate.pdf_sink = sink
    report = gate.compile(root)
    if report.ok and report.cached and not target.is_file():
        if not pdfstore.get(gate.cache_dir, gate.last_key, target):
            use_cache, gate.use_cache = gate.use_cache, False  # verdict kept, PDF not: compile once more
            try:
                report = gate.compile(root)
            finally:
                gate.use_cache = use_cache
            if report.ok:
                pdfstore.put(gate.cache_dir, gate.last_key, target)
    return report, report.ok and target.is_file()


def _keep(pdf: Path, target: Path) -> None:
    if pdf.is_file() and not pdf.is_symlink() and pdf.stat().st_size <= pdfstore.MAX_BYTES:
        target.write_bytes(pdf.read_bytes())


def _pages(pdf: Path, seconds: float) -> tuple[list[Page], str]:
    found = read_pdf(pdf, seconds=seconds, digests=True)
    if found.text is None or not found.pages:
        return [], found.note or "its text could not be read"
    marks = list(found.digests) + [":"] * (len(found.pages) - len(found.digests))
    return [Page(i + 1, text, *marks[i].partition(":")[::2]) for i, text in enumerate(found.pages)], ""


def _failed(report: CompileReport) -> str:
    first = next((v for v in report.violations if v.severity != "warning"), None)
    # a file name from a pull request: no control characters reach a terminal or a log
    name = shown.text(Path(first.file).name) if first else ""
    return f"{first.kind} at {name}:{first.line}" if first else "no PDF"


def base_root(root: Path, base: GitBase, scratch: Path) -> Path | None:
    """Return the base version of `root` extracted below `scratch` (None: the manuscript is new in the change)."""
    rel = base.renames.get(str(root.resolve().relative_to(base.top.resolve())), None)
    rel = rel or str(root.resolve().relative_to(base.top.resolve()))
    if base.text(root) is None:
        return None
    manuscript = load_manuscript(root)
    wide = refers_above(manuscript) or bool(shared_bibliographies(manuscript))
    subdir = "" if wide else Path(rel).parent.as_posix().strip(".")
    basetree.archive(base.top, base.rev, subdir, scratch)
    return scratch / rel


def write_pages(root: Path, base: GitBase, changes: list[Violation], options: PagesOptions) -> PagesReport:
    """Draw the pages the change altered into `options.directory`; return what was drawn and counted."""
    from .pageshtml import write_index

    started = time.monotonic()
    out = options.directory
    out.mkdir(parents=True, exist_ok=True)
    report = PagesReport(out)
    scratch = make_owned_temp_dir("pages")
    try:
        pages: dict[str, list[Page]] = {}
        for side in ("base", "change"):
            if side == "base":
                where = base_root(root, base, scratch / "tree")
                if where is None:
                    pages[side] = []
                    continue
            else:
                where = root.resolve()
            gate = CompileGate(engine=options.engine, timeout=options.timeout, use_cache=options.use_cache,
                               trusted=options.trusted, cache_dir=options.cache_dir,
                               rootdir=scratch / "tree" if side == "base" else None)  # fmt: skip
            compiled, have = _compiled_pdf(gate, where, scratch / f"{side}.pdf")
            if not have:
                report.note = f"the {side} does not compile ({_failed(compiled)}): no pages to compare"
                break
            pages[side], why = _pages(scratch / f"{side}.pdf", options.timeout)
            if why:
                report.note = f"the {side}'s PDF text cannot be read ({why}): no pages to compare"
                break
        if not report.note:
            _draw(pages["base"], pages["change"], changes, options, report, scratch, started)
    finally:
        remove_tree(scratch)
    report.seconds = time.monotonic() - started
    write_index(report, root)
    return report


def _draw(
    base: list[Page], change: list[Page], changes: list[Violation], options: PagesOptions,
    report: PagesReport, scratch: Path, started: float,
) -> None:  # fmt: skip
    report.base_pages, report.pages = len(base), len(change)
    pairs = pair_pages(base, change)
    report.unchanged = sum(p.same for p in pairs)
    deadline = started + options.timeout
    drawn: list[tuple[Pair, ShownPage]] = []
    for pair in (p for p in pairs if not p.same):
        name = _name(pair)
        if len(drawn) + report.same_pixels >= options.max_pages:
            report.left_out.append(f"{name}: more than {options.max_pages} pages to draw (--pages-max)")
            continue
        files: dict[str, Path | None] = {}
        try:
            for side, page in (("before", pair.base), ("after", pair.change)):
                files[side] = None
                if page is not None:
                    png = files[side] = scratch / f"{side}-{page.number}.png"
                    pdf = scratch / ("base.pdf" if side == "before" else "change.pdf")
                    pagerender.render_page(pdf, page.number, png, side=options.side, deadline=deadline,
                                           trusted=options.trusted)  # fmt: skip
            boxes = pagepixels.changed_boxes(files["before"], files["after"])
        except (pagerender.RenderError, ValueError, OSError) as exc:
            report.left_out.append(f"{name}: {exc}")
            continue
        if not boxes:
            report.same_pixels += 1
            continue
        drawn_page = ShownPage(pair.base.number if pair.base else None,
                               pair.change.number if pair.change else None, None, None, len(boxes))  # fmt: skip
        for side, attribute in (("before", "before"), ("after", "after")):
            source = files[side]
            if source is not None:
                target = f"{_slug(pair)}-{side}.png"
                pagepixels.draw_boxes(source, boxes, options.directory / target)
                setattr(drawn_page, attribute, target)
        report.shown.append(drawn_page)
        drawn.append((pair, drawn_page))
    for moved in changes:
        old = _OLD.match(moved.message)
        where = [s for p, s in drawn if place(moved.token, old.group(1) if old else None, p)]
        if not where and len(drawn) == 1:
            where = [drawn[0][1]]  # a cite key is not in the text; one changed page is where it shows
        if where:
            where[0].changes.append(moved)
        else:
            report.unplaced.append(moved)


def _name(pair: Pair) -> str:
    if pair.base and pair.change:
        moved = pair.base.number != pair.change.number
        return f"page {pair.change.number}" + (f" (was {pair.base.number})" if moved else "")
    if pair.change:
        return f"page {pair.change.number} (added)"
    return f"base page {pair.base.number if pair.base else 0} (removed)"


def _slug(pair: Pair) -> str:
    return f"page-{pair.change.number:03d}" if pair.change else f"base-page-{pair.base.number if pair.base else 0:03d}"
