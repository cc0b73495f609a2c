"""One PDF page as a PNG, drawn by poppler's `pdftoppm` inside the sandbox (the PDF comes from a stranger)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from . import sandbox, sandboxcmd
from .sandboxlimits import GiB, Limits, MiB

TOOL = "pdftoppm"
PACKAGE = "poppler-utils"
MAX_SIDE = 3000  # pixels of a page's long side, at most (the option's cap)
PNG_BYTES = 64 << 20  # what a rendered page may weigh; more is not a page of a paper
# far above what one page needs, far below what a hostile page could take
LIMITS = Limits(memory_bytes=2 * GiB, file_bytes=PNG_BYTES, disk_bytes=2 * PNG_BYTES,
                        tmp_bytes=64 * MiB, processes=16, cpu_seconds=120)  # fmt: skip


class RenderError(RuntimeError):
    """A page could not be drawn; the message says why (one line)."""


def missing() -> str:
    """Return why pages cannot be drawn here ("" when `pdftoppm` is installed)."""
    return "" if shutil.which(TOOL) else f"{TOOL} is not installed (Debian package {PACKAGE})"


def render_page(pdf: Path, page: int, out: Path, *, side: int, deadline: float, trusted: bool = False) -> None:
    """Write page `page` (1-based) of `pdf` to the PNG `out`, its long side `side` pixels; raise RenderError."""
    side = max(64, min(int(side), MAX_SIDE))
    if time.monotonic() >= deadline:
        raise RenderError("the time budget for pages ran out")
    with sandbox.job_directory("pages") as tree:
        shutil.copyfile(pdf, tree / "in.pdf")
        options = ["-png", "-singlefile", "-f", str(page), "-l", str(page), "-scale-to", str(side)]
        confined = not trusted and sandboxcmd.available()
        if not confined and not trusted:
            raise RenderError(f"no sandbox can be made here ({sandboxcmd.unavailable_reason()})")
        outcome = sandbox.run(TOOL, options, ["in.pdf", "page"], tree, deadline=deadline, limits=LIMITS,
                              confined=confined)  # fmt: skip
        made = tree / "page.png"
        if outcome.timed_out:
            raise RenderError("the time budget for pages ran out")
        if outcome.over_limit or outcome.signal or outcome.not_started:
            why = outcome.not_started or outcome.over_limit or f"signal {outcome.signal}"
            raise RenderError(f"{TOOL} was stopped ({why})")
        if outcome.returncode != 0 or not made.is_file() or made.is_symlink():
            raise RenderError(f"{TOOL} could not draw page {page} (exit {outcome.returncode})")
        if made.stat().st_size > PNG_BYTES:
            raise RenderError(f"page {page} drew to more than {PNG_BYTES >> 20} MB")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(made, out)
