"""Bitmap fonts that METAFONT made for a compile, kept for later compiles without trusting the manuscript.

A document in T1 encoding without outline fonts (cm-super) makes pdfTeX call
mktexpk for every EC font it uses; inside the sandbox that took 10 s for a
one-page document and 40 s for a real paper, on every engine run. Each job
therefore gets its own writable TEXMFVAR (its runs share what the first one
made), and the per-user cache `$XDG_CACHE_HOME/patchwrite/texmf-var` is bound
read-only into every sandbox as its TEXMFHOME.

The job's own font files are never copied into that cache: a hostile manuscript
can write any bytes there (LuaTeX's `io`), and a bad glyph or a malformed font
would then reach every other manuscript's compile. From the job we take only
the names of the fonts it made (name, resolution, METAFONT mode, matched against
kpathsea's layout); each missing one is made again by mktexpk/mktextfm in a
fresh sandbox that holds nothing of any manuscript, so the cache holds only what
TeX Live's own sources give for that name.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..engine import sandbox, sandboxcmd
from ..files.tempfiles import TEMP_SUFFIX, temp_file_prefix
from .verdicts import default_cache_dir

# kpathsea's layout of generated fonts (mktexnam): fonts/pk/<mode>/<supplier>/<typeface>/<name>.<dpi>pk
_PK = re.compile(r"fonts/pk/(?P<mode>[a-z][a-z0-9]{0,31})/[a-z0-9_-]{1,64}/[a-z0-9_-]{1,64}/"
                 r"(?P<name>[A-Za-z0-9_][A-Za-z0-9_-]{0,63})\.(?P<dpi>[1-9][0-9]{1,4})pk")  # fmt: skip
_TFM = re.compile(r"fonts/tfm/[a-z0-9_-]{1,64}/[a-z0-9_-]{1,64}/(?P<name>[A-Za-z0-9_][A-Za-z0-9_-]{0,63})\.tfm")
# the modes mktexpk itself knows by resolution; a mode outside this list is never built for the cache
MODES = {"sun": 85, "nextscrn": 100, "toshiba": 180, "cx": 300, "epstylus": 360, "nexthi": 400, "ljfour": 600,
         "epscszz": 720, "ultre": 1200, "linoone": 1270}  # fmt: skip
MAX_FONT_BYTES = 1 << 20  # a 600 dpi PK of a text font is 5-30 KB
MAX_CACHE_BYTES = 256 << 20
MAX_BUILDS = 64  # fonts made for the cache after one compile
BUILD_SECONDS = 120.0


def cache_dir() -> Path:
    """Return the per-user font cache (`$XDG_CACHE_HOME/patchwrite/texmf-var`)."""
    return default_cache_dir().parent / "texmf-var"


@contextmanager
def job_fonts(confined: bool) -> Iterator[sandboxcmd.FontDirs | None]:
    """Yield the font directories of one compile (None when not confined); afterwards, fill the cache."""
    if not confined:
        yield None
        return
    with sandbox.job_directory("fonts") as var:
        yield sandboxcmd.FontDirs(var, cache_dir())
        try:
            build(made(var))  # not after an interrupt or error: the run is ending
        except OSError as exc:  # a read-only or full cache: the job's own fonts served it; later jobs make them again
            _warn_once(f"patchwrite: the font cache {cache_dir()} cannot be written ({exc.strerror}); bitmap fonts "
                       "are made again for every compile")  # fmt: skip


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        print(message, file=sys.stderr)


def made(var: Path) -> list[tuple[str, str, int]]:
    """Return the fonts a job made, as (kind, name, dpi) with kind a METAFONT mode for a PK and "tfm" for a TFM."""
    found: list[tuple[str, str, int]] = []
    for path in _files(var):
        rel = path.relative_to(var).as_posix()
        if pk := _PK.fullmatch(rel):
            found.append((pk.group("mode"), pk.group("name"), int(pk.group("dpi"))))
        elif tfm := _TFM.fullmatch(rel):
            found.append(("tfm", tfm.group("name"), 0))
    return sorted(set(found))


def running(var: Path) -> bool:
    """Return whether a job has started making fonts (mktexpk or mktextfm wrote below its TEXMFVAR)."""
    return (var / "fonts").is_dir()


def _files(top: Path) -> Iterator[Path]:
    """Yield the regular files below `top`, never following a link, at most 10 000."""
    count = 0
    for directory, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(directory, d))]
        for name in files:
            path = Path(directory, name)
            if path.is_file() and not path.is_symlink():
                count += 1
                if count > 10_000:
                    return
                yield path


def _cached(kind: str, name: str, dpi: int) -> bool:
    pattern = f"{name}.tfm" if kind == "tfm" else f"{name}.{dpi}pk"
    top = cache_dir() / "fonts" / ("tfm" if kind == "tfm" else f"pk/{kind}")
    return any(top.glob(f"*/*/{pattern}"))


def build(fonts: list[tuple[str, str, int]]) -> list[str]:
    """Make the fonts the cache lacks from TeX Live's sources alone; return the cache files added."""
    wanted = [f for f in fonts if (f[0] == "tfm" or f[0] in MODES) and not _cached(*f)][:MAX_BUILDS]
    if not wanted or sandbox.tree_bytes(cache_dir(), MAX_CACHE_BYTES) > MAX_CACHE_BYTES:
        return []
    added: list[str] = []
    deadline = time.monotonic() + BUILD_SECONDS
    with sandbox.job_directory("fonts") as staging:
        work, var = staging / "work", staging / "var"
        work.mkdir()
        var.mkdir()
        for kind, name, dpi in wanted:
            if time.monotonic() >= deadline:
                break
            if kind == "tfm":
                tool, options = "mktextfm", []
            else:
                bdpi = MODES[kind]
                tool, options = "mktexpk", ["--mfmode", kind, "--bdpi", str(bdpi), "--mag", f"{dpi}/{bdpi}",
                                            "--dpi", str(dpi)]  # fmt: skip
            try:
                sandbox.run(tool, options, [name], work, deadline=deadline, fonts=sandboxcmd.FontDirs(var, cache_dir()))
            except (OSError, ValueError, sandboxcmd.SandboxError):
                return added
        for path in _files(var):
            rel = path.relative_to(var).as_posix()
            if (_PK.fullmatch(rel) or _TFM.fullmatch(rel)) and path.stat().st_size <= MAX_FONT_BYTES:
                target = cache_dir() / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                # a name `patchwrite clean` and the sweep know (it names this process): a killed build leaves no orphan
                fd, partial = tempfile.mkstemp(dir=target.parent, prefix=temp_file_prefix(target), suffix=TEMP_SUFFIX)
                os.close(fd)
                try:
                    shutil.copyfile(path, partial)
                    os.replace(partial, target)  # a concurrent compile sees the whole font or none
                except BaseException:
                    os.unlink(partial)
                    raise
                added.append(rel)
    return added
