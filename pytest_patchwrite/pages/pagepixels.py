"""Where two drawings of a page differ: pixel boxes from Pillow + numpy, and the PNGs with those boxes drawn."""

from __future__ import annotations

from pathlib import Path

CELL = 8  # pixels per side of the grid cells differences are gathered in
LEVEL = 48  # grey levels two pixels must differ by (anti-aliasing noise stays below)
GAP = 2  # cells between two changed regions that still make one box
MAX_PIXELS = 3000 * 3000  # what pagerender's side cap allows; a bigger PNG is not ours
BOX = (220, 30, 30)

Box = tuple[int, int, int, int]  # left, top, right, bottom in pixels


def _load(path: Path):  # -> numpy array of grey levels
    import numpy
    from PIL import Image

    with Image.open(path) as image:
        if image.width * image.height > MAX_PIXELS:
            raise ValueError(f"{path.name} is larger than {MAX_PIXELS} pixels")
        return numpy.asarray(image.convert("L"), dtype=numpy.int16)


def changed_boxes(before: Path | None, after: Path | None) -> list[Box]:
    """Return the boxes (pixels) where the two drawings differ; a missing side makes the whole page one box."""
    import numpy

    a = _load(before) if before is not None else None
    b = _load(after) if after is not None else None
    if a is None or b is None:
        shown = a if a is not None else b
        return [] if shown is None else [(0, 0, shown.shape[1], shown.shape[0])]
    height, width = max(a.shape[0], b.shape[0]), max(a.shape[1], b.shape[1])
    pa = numpy.full((height, width), 255, dtype=numpy.int16)
    pb = pa.copy()
    pa[: a.shape[0], : a.shape[1]] = a
    pb[: b.shape[0], : b.shape[1]] = b
    differs = numpy.abs(pa - pb) > LEVEL
    if not differs.any():
        return []
    rows, cols = -(-height // CELL), -(-width // CELL)
    padded = numpy.zeros((rows * CELL, cols * CELL), dtype=bool)
    padded[:height, :width] = differs
    cells = padded.reshape(rows, CELL, cols, CELL).any(axis=(1, 3))
    return [(c0 * CELL, r0 * CELL, min(width, c1 * CELL), min(height, r1 * CELL)) for r0, c0, r1, c1 in _regions(cells)]


def _regions(cells) -> list[tuple[int, int, int, int]]:
    """Return (row0, col0, row1, col1) of each group of marked cells, cells up to GAP apart joined (flood fill)."""
    rows, cols = cells.shape
    marked = {(int(r), int(c)) for r, c in zip(*cells.nonzero(), strict=True)}
    seen: set[tuple[int, int]] = set()
    out = []
    for start in sorted(marked):
        if start in seen:
            continue
        seen.add(start)
        stack, r0, c0, r1, c1 = [start], start[0], start[1], start[0], start[1]
        while stack:
            r, c = stack.pop()
            r0, c0, r1, c1 = min(r0, r), min(c0, c), max(r1, r), max(c1, c)
            for dr in range(-GAP, GAP + 1):
                for dc in range(-GAP, GAP + 1):
                    near = (r + dr, c + dc)
                    if near in marked and near not in seen:
                        seen.add(near)
                        stack.append(near)
        out.append((r0, c0, r1 + 1, c1 + 1))
    return out


def draw_boxes(source: Path, boxes: list[Box], target: Path) -> None:
    """Write `source` to `target` with every box outlined (a few pixels outside it, so the change stays visible)."""
    from PIL import Image, ImageDraw

    with Image.open(source) as image:
        shown = image.convert("RGB")
    pen = ImageDraw.Draw(shown)
    for left, top, right, bottom in boxes:
        pen.rectangle((max(0, left - 3), max(0, top - 3), min(shown.width - 1, right + 2),
                       min(shown.height - 1, bottom + 2)), outline=BOX, width=3)  # fmt: skip
    target.parent.mkdir(parents=True, exist_ok=True)
    shown.save(target, format="PNG", optimize=False)
