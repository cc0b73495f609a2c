"""The font map of a warm run: the lines of pdfTeX's map for the fonts HEAD used, not all of them.

pdfTeX reads its whole font map (`pdftex.map`: about 34,000 lines with TeX Live's fonts) in every run, which is
about a quarter of the CPU time of a one-page run. HEAD's settled run already showed which fonts the manuscript
uses, so a warm run (gates.warm) reads a map cut to the lines of those fonts, bound read-only over the map's own
path inside the sandbox: the log and the engine's record name the same file as in a cold run.

Why the verdict stays the cold one. pdfTeX looks a font up by its name; for a font whose lines the cut map holds
(a font HEAD's run loaded, embedded or drew as a bitmap, and the other sizes of its family), both maps give the
same lines in the same order. A run can only differ where it looks up another font: the cut map has no entry, so
pdfTeX turns to a bitmap font and either opens a `.pk` file (the `.fls` lists it) or, with mktexpk off
(`-no-mktex=pk`, so nothing is generated), stops with a `!pdfTeX error`. A warm run that opened a `.pk` HEAD's
run did not open, read a file outside the copy that HEAD's run did not read (but a metric, or the files of a kept
entry), or met a pdfTeX error is therefore void and the compile starts again cold (`faithful`). The map is cut
only when HEAD's run read one map (`pdftex.map`, no manuscript's own) and no font its own job made, its log shows
no map warning (a warning about another font's line would be missing from the warm log), no TeX file it read
and no source of the candidate names `\\pdfmap...`, and the engine is pdflatex.
"""

from __future__ import annotations

import os
import re
import threading
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from ..engine import sandbox, sandboxcmd
from ..engine.texlog import Recording
from .rerun import read_log

ENGINES = ("pdflatex",)  # the engines whose map this module knows (LuaTeX and XeTeX read theirs otherwise)
MAP = "pdftex.map"
KPSE_NAMES = "texfonts.map"  # kpathsea's font name aliases, read at the first metric it looks up: not pdfTeX's map
_PK = re.compile(r"\.(?:\d+)?pk$")  # cmr10.657pk, dpi600/cmr10.pk
_FAMILY = re.compile(r"(?P<family>[a-z]+)\d+")  # cmr10: a family of sizes (cmr5, cmr7 are preloaded: no .tfm read)
_FONT_FILES = (".pfb", ".pfa", ".ttf", ".otf")
# what a run may read that HEAD's did not: a metric (read by `\font`, whatever the map says; kpathsea's aliases
# with it) and the files of an entry the cut map holds (the whole map's lines for that font); a new package or a
# virtual font voids the run
_NEW_READS = (".tfm", ".pfb", ".pfa", ".enc")
_CODE = (".tex", ".sty", ".cls", ".def", ".cfg", ".clo", ".fd", ".ltx")  # where `\pdfmapline` could be
MKTEX_OFF = "-no-mktex=pk"


@dataclass(frozen=True)
class FontUse:
    """What HEAD's settled run read that a cut map is made from: its map (as the engine named it), the metric
    and font files it opened (names without directories) and every file it read outside the copy."""

    map_file: str
    metrics: tuple[str, ...]
    font_files: tuple[str, ...]
    reads: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        """Return the use as JSON data (kept with the warm state)."""
        return {"map": self.map_file, "metrics": list(self.metrics), "font_files": list(self.font_files),
                "reads": list(self.reads)}  # fmt: skip

    @classmethod
    def from_json(cls, data: object) -> FontUse | None:
        """Return a use read back from `to_json` data, None for anything else (then no map is cut)."""
        if not isinstance(data, dict):
            return None
        try:
            fields = [data["metrics"], data["font_files"], data["reads"]]
            if not isinstance(data["map"], str) or not all(isinstance(f, list) for f in fields):
                return None
            metrics, files, reads = (tuple(str(x) for x in f) for f in fields)
            return cls(data["map"], metrics, files, reads)
        except KeyError:
            return None


def _outside(recorded: Recording) -> list[str]:
    """Return the files a run read outside the copy (absolute names not in the sandbox's tree)."""
    tree = sandboxcmd.TREE.rstrip("/") + "/"
    return [name for name in recorded.inputs if os.path.isabs(name) and not name.startswith(tree)]


def used(engine: str, confined: bool, work: Path, job: str, recorded: Recording) -> FontUse | None:
    """Return what a settled run in `work` used of the font map, or None when its warm runs read the whole map."""
    if engine not in ENGINES or not confined:
        return None
    outside = _outside(recorded)
    maps = [name for name in outside if name.endswith(".map") and os.path.basename(name) != KPSE_NAMES]
    if len(maps) != 1 or os.path.basename(maps[0]) != MAP or not sandboxcmd.read_only_host_path(maps[0]):
        return None
    if any(name.startswith(f"{sandboxcmd.HOME}/texmf-var/") for name in outside):
        return None  # a font this job made: a warm job finds it in the cache, by another name
    if "map)" in read_log(work / f"{job}.log"):  # `pdfTeX warning: pdflatex (file .../pdftex.map): ...`
        return None
    own = [work / n for n in recorded.inputs if not os.path.isabs(n) and n.endswith(_CODE)]
    if _names_map_lines(own):  # the manuscript's own code adds map lines: duplicates would warn in a cold run
        return None
    metrics = {os.path.basename(n)[:-4] for n in recorded.inputs if n.endswith(".tfm")}
    metrics |= {os.path.basename(n).split(".")[0] for n in recorded.inputs if _PK.search(n)}  # no map entry
    files = sorted({os.path.basename(n) for n in recorded.inputs if n.lower().endswith(_FONT_FILES)})
    return FontUse(maps[0], tuple(sorted(metrics)), tuple(files), tuple(outside))


@dataclass(frozen=True)
class CutMap:
    """A cut map: its bytes, the host path it covers inside the sandbox, the names of its lines and those of
    every line of the whole map (one set shared by the cuts of one map)."""

    data: bytes
    target: str
    kept: frozenset[str] = frozenset()
    mapped: frozenset[str] = frozenset()

    def dropped(self, name: str) -> bool:
        """Return whether the whole map has a line for the font `name` and the cut one has none."""
        return name in self.mapped and name not in self.kept


@dataclass(frozen=True)
class Rule:
    """What `faithful` judges a run that read a cut map by: HEAD's reads outside the copy, and the cut."""

    reads: tuple[str, ...]
    cut: CutMap


_cuts: dict[tuple[object, ...], CutMap | None] = {}
_cuts_lock = threading.Lock()
_mapped: dict[tuple[object, ...], frozenset[str]] = {}  # the names of a whole map's lines, by its file's identity


def cut(use: FontUse | None, texts: dict[Path, str]) -> CutMap | None:
    """Return the cut map for a warm run of a manuscript with these source texts, or None (read the whole map)."""
    if use is None or any("pdfmap" in text for text in texts.values()):
        return None
    target = os.path.realpath(use.map_file)
    try:
        st = os.stat(target)
    except OSError:
        return None
    key = (target, st.st_ino, st.st_mtime_ns, st.st_size, use.metrics, use.font_files, use.reads)
    with _cuts_lock:
        if key in _cuts:
            return _cuts[key]
    # a package HEAD read that adds map lines: a line of another font would warn in a cold run, not a warm one
    made = None if _names_map_lines([Path(n) for n in use.reads if n.endswith(_CODE)]) else _make(target, use, key[:4])
    with _cuts_lock:
        if len(_cuts) > 64:
            _cuts.clear()
        _cuts[key] = made
    return made


def bind(
    fonts: sandboxcmd.FontDirs | None, use: FontUse | None, texts: dict[Path, str], stack: ExitStack
) -> sandboxcmd.FontDirs | None:
    """Return the font directories of a warm run with the cut map bound over the whole one (the file lives as
    long as `stack`), or None when the map is not cut (`cut`) or the run is not confined (`fonts` is None)."""
    made = cut(use, texts) if fonts is not None else None
    if made is None or fonts is None:
        return None
    directory = stack.enter_context(sandbox.job_directory("fontmap"))
    (directory / MAP).write_bytes(made.data)
    return replace(fonts, map_over=(directory / MAP, made.target))


def rule(use: FontUse | None, texts: dict[Path, str]) -> Rule | None:
    """Return what `faithful` judges a run that read the cut map of `use` by (None: the map is not cut)."""
    made = cut(use, texts)
    return Rule(use.reads, made) if use is not None and made is not None else None


def _make(target: str, use: FontUse, identity: tuple[object, ...]) -> CutMap | None:
    """Return the lines of the map at `target` for HEAD's fonts (their names, the fonts whose file HEAD embedded,
    the sizes of their families, subfont entries), in the map's order."""
    try:
        lines = Path(target).read_bytes().splitlines(keepends=True)
    except OSError:
        return None
    names = set(use.metrics)
    files = {f.encode() for f in use.font_files}
    kept: list[bytes] = []
    found: list[tuple[bytes, bytes]] = []
    for line in lines:
        fields = line.split()
        if not fields or fields[0][:1] in (b"%", b"#"):
            continue
        found.append((fields[0], line))
        if any(f.lstrip(b"<[") in files for f in fields[1:] if f.startswith(b"<")):
            names.add(fields[0].decode("latin-1"))
    families = {m.group("family") for n in names if (m := _FAMILY.fullmatch(n))}
    kept_names: set[str] = set()
    for name, line in found:
        text = name.decode("latin-1")
        family = _FAMILY.fullmatch(text)
        if text in names or b"@" in name or (family is not None and family.group("family") in families):
            kept.append(line)
            kept_names.add(text)
    with _cuts_lock:
        if identity not in _mapped:
            _mapped.clear()  # one map a machine, as a rule: a changed map replaces its names
            _mapped[identity] = frozenset(name.decode("latin-1") for name, _ in found)
        mapped = _mapped[identity]
    return CutMap(b"".join(kept), target, frozenset(kept_names), mapped)


def _names_map_lines(files: list[Path]) -> bool:
    """Return whether any of these TeX files names `\\pdfmapline` or `\\pdfmapfile` (or cannot be read)."""
    for path in files:
        try:
            if b"pdfmap" in path.read_bytes():
                return True
        except OSError:
            return True
    return False


def faithful(recorded: Recording, log: str, rule: Rule) -> bool:
    """Return whether a run that read a cut map read what a run with the whole map reads: no bitmap font HEAD's
    run did not open of a font the cut dropped (a bitmap of a font the whole map has no line for is the one a
    run with the whole map draws), outside the copy nothing HEAD's run did not read but metrics, such bitmaps
    and the files of a kept entry, no pdfTeX error (a font without an entry and without a bitmap stops the run)."""
    allowed = set(rule.reads)
    bitmaps = [name for name in recorded.inputs if _PK.search(name) and name not in allowed]
    if any(rule.cut.dropped(os.path.basename(name).split(".")[0]) for name in bitmaps) or "!pdfTeX error" in log:
        return False
    allowed.update(bitmaps)
    return all(name in allowed or name.lower().endswith(_NEW_READS) or os.path.basename(name) == KPSE_NAMES
               for name in _outside(recorded))  # fmt: skip
