"""Warm starts: a candidate's compile begins from the auxiliary files of an earlier compile of the same manuscript.

A cold check runs engine, bibliography tool, engine, engine until the auxiliary
files (`.aux`, `.bbl`, `.toc`, `.out`, ...) settle; its verdict is read from the
last run, whose auxiliary files are a fixed point: running again would read
what it wrote. A one-line candidate rarely moves that fixed point, so its
compile starts from HEAD's settled files and stops after one run when the same
test holds (no auxiliary file changed, the log asks for no rerun, the
bibliography tool's input is what HEAD's `.bbl` was made from); otherwise the
ordinary loop goes on from there (bibliography tool, more runs). Where the
state itself shows in the verdict (an error located in an auxiliary file, or a
file HEAD wrote that the candidate no longer writes) the compile starts again
cold. Only documents whose build files this module knows are kept: a package
that writes its own files for a later run (minitoc, glossaries) gets no warm
start.

States live in memory per process (an LRU of a few manuscripts) and, with the
verdict cache, on disk beside it (sealed, see cachetrust), so a `patchwrite apply`
after a `patchwrite check` of the same bytes starts warm too.
"""

from __future__ import annotations

import base64
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.texlog import ERROR, FATAL, LogMessage
from ..files.streamread import file_sha256
from . import cachetrust
from .fontmap import FontUse, Rule
from .rerun import AUX_SUFFIXES

if TYPE_CHECKING:
    from ..snapshot.manuscript import Manuscript

# what a run writes that no later run reads: never part of a state
OUTPUTS = (".log", ".pdf", ".fls", ".blg", ".run.xml", ".synctex.gz", ".synctex", ".xdv", ".dvi")
# what the engine writes and a later run (or biber) reads back, as the compile loop tracks it
STATE = AUX_SUFFIXES | {".bcf"}
# what the bibliography tool reads besides the .aux/.bcf: a change means the kept .bbl may be stale
BIB_INPUTS = (".bib", ".bst", ".bbx", ".cbx", ".lbx", ".dbx", ".conf")
MAX_STATE_BYTES = 16 << 20  # a state is kept in memory; a document with more auxiliary data gets no warm start
MANUSCRIPTS = 8  # manuscripts whose states are kept per process (the LRU)


@dataclass(frozen=True)
class WarmState:
    """The settled build files of one compile, the sources it compiled ({relpath: sha256}), what its
    bibliography tool last read and what its last run used of the font map (gates.fontmap)."""

    files: dict[str, bytes]
    sources: dict[str, bytes]
    bib_read: str | None
    fonts: FontUse | None = None

    def to_json(self) -> dict[str, object]:
        """Return the state as JSON data (base64 file contents, hex digests)."""
        files = {rel: base64.b64encode(data).decode("ascii") for rel, data in self.files.items()}
        return {"files": files, "sources": {rel: d.hex() for rel, d in self.sources.items()}, "bib_read": self.bib_read,
                "fonts": self.fonts.to_json() if self.fonts is not None else None}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict) -> WarmState:
        """Return a state read back from `to_json` data."""
        files = {str(rel): base64.b64decode(text, validate=True) for rel, text in data["files"].items()}
        sources = {str(rel): bytes.fromhex(d) for rel, d in data["sources"].items()}
        bib_read = data["bib_read"]
        fonts = FontUse.from_json(data.get("fonts"))
        return cls(files, sources, bib_read if isinstance(bib_read, str) else None, fonts)


@dataclass
class Start:
    """How one compile starts and how its warm start went: `kind` is `cold`, `warm` (one run settled it),
    `warm+` (the bibliography tool or more runs were needed) or `fallback` (it had to start again cold)."""

    state: WarmState | None = None
    seeded: dict[str, int] = field(default_factory=dict)
    kind: str = "cold"
    bib: str | None = None  # what the bibliography tool last read (the .aux lines or the .bcf), as the loop goes
    first_errors: list[LogMessage] = field(default_factory=list)  # what the first run stopped at (gates.confirm)
    font_rule: Rule | None = None  # runs read a cut font map, judged by this rule (gates.fontmap)

    def kept_bib(self, sources: dict[str, bytes]) -> str | None:
        """Return what the kept `.bbl` was made from, or None when a file the bibliography tool reads has changed."""
        if self.state is None:
            return None
        changed = {rel for rel in sources.keys() | self.state.sources.keys()
                   if sources.get(rel) != self.state.sources.get(rel)}  # fmt: skip
        return None if any(rel.endswith(BIB_INPUTS) for rel in changed) else self.state.bib_read

    def shows_state(self, messages: list[LogMessage], work: Path) -> bool:
        """Return whether the first warm run's verdict may depend on the kept files: an error sits in an auxiliary
        file, or a file HEAD's runs wrote was not written again (the candidate stopped writing it, so a cold run
        would not have it)."""
        if any(m.severity in (ERROR, FATAL) and _suffix(m.file) in STATE for m in messages):
            return True
        return bool(untouched(work, self.seeded))


def _suffix(name: str) -> str:
    name = os.path.basename(name)
    for long in (".run.xml", ".synctex.gz"):
        if name.endswith(long):
            return long
    return os.path.splitext(name)[1]


def capture(
    work: Path, sources: dict[str, bytes], bib_read: str | None, fonts: FontUse | None = None
) -> WarmState | None:
    """Return the build files in `work` (new ones, and sources a run rewrote) as a state, or None when one of them
    is of a kind the compile loop does not track (its next run could read it without the loop noticing)."""
    files: dict[str, bytes] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(work):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(work))
            suffix = _suffix(name)
            if suffix in OUTPUTS:
                continue
            if rel in sources and file_sha256(path) == sources[rel]:
                continue  # a source file as it was copied (hashed in pieces: a big log is never held)
            data = path.read_bytes()
            if suffix not in STATE:
                return None
            total += len(data)
            if total > MAX_STATE_BYTES:
                return None
            files[rel] = data
    return WarmState(files, dict(sources), bib_read, fonts)


def seed(work: Path, state: WarmState) -> dict[str, int]:
    """Write `state`'s files into `work`; return {relpath: mtime_ns} of each, to tell later which a run rewrote."""
    written: dict[str, int] = {}
    for rel, data in state.files.items():
        path = work / rel
        if not path.resolve().is_relative_to(work.resolve()):
            continue  # a state is ours, but never let a name leave the job directory
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)  # a new inode: the confirmation's job directory may hold a link to this one
        path.write_bytes(data)
        written[rel] = path.stat().st_mtime_ns
    return written


def untouched(work: Path, seeded: dict[str, int]) -> list[str]:
    """Return the seeded engine files a run did not write again (the `.bbl` is the bibliography tool's)."""
    stale = []
    for rel, mtime in seeded.items():
        if rel.endswith(".bbl"):
            continue
        try:
            if (work / rel).stat().st_mtime_ns == mtime:
                stale.append(rel)
        except OSError:
            stale.append(rel)
    return stale


class StateStore:
    """States by the digest of the sources they were compiled from: an in-memory LRU of a few manuscripts (each
    with its HEAD's state and its latest candidate's), and a directory on disk."""

    def __init__(self, size: int = MANUSCRIPTS, per_root: int = 2) -> None:
        self.size = size * per_root
        self.per_root = per_root
        self._memory: OrderedDict[str, tuple[str, WarmState]] = OrderedDict()  # digest -> (root, state)
        self._lock = threading.Lock()

    def get(
        self, digest: str, root: str, directory: Path | None, rejected: list[str] | None = None
    ) -> WarmState | None:
        """Return the state of exactly these sources (memory, then disk), else the latest state of the same root.

        A state on disk whose HMAC does not verify is ignored and its path appended to `rejected`.
        """
        with self._lock:
            if digest in self._memory:
                self._memory.move_to_end(digest)  # HEAD's state stays while its candidates come and go
                return self._memory[digest][1]
        if directory is not None:
            path = directory / digest[:2] / f"{digest}.json"
            data, refused = cachetrust.read_entry(path, "warm", digest)
            if refused and rejected is not None:
                rejected.append(str(path))
            try:
                state = WarmState.from_json(data) if data is not None else None
            except (ValueError, TypeError, KeyError, AttributeError):
                state = None  # not a state we wrote: a cold start only costs time
            if state is not None:
                self._remember(digest, root, state)
                return state
        with self._lock:
            latest = [key for key, (owner, _) in self._memory.items() if owner == root]
            return self._memory[latest[-1]][1] if latest else None

    def put(self, digest: str, root: str, state: WarmState, directory: Path | None) -> None:
        """Keep `state` for the sources with `digest` (also on disk when `directory` is given)."""
        self._remember(digest, root, state)
        entry = cachetrust.seal("warm", digest, state.to_json()) if directory is not None else None
        if directory is not None and entry is not None:  # the verdict cache's directory warns for both
            cachetrust.store(directory.parent, directory / digest[:2] / f"{digest}.json", entry)

    def clear(self) -> None:
        """Forget every state kept in memory."""
        with self._lock:
            self._memory.clear()

    def _remember(self, digest: str, root: str, state: WarmState) -> None:
        with self._lock:
            self._memory[digest] = (root, state)
            self._memory.move_to_end(digest)
            same = [key for key, (owner, _) in self._memory.items() if owner == root]
            for key in same[: -self.per_root]:
                del self._memory[key]
            while len(self._memory) > self.size:
                self._memory.popitem(last=False)


STORE = StateStore()


def head_sources(manuscript: Manuscript, copied: dict[str, bytes]) -> dict[str, bytes]:
    """Return {relpath: sha256} of HEAD's sources (the files on disk): the key a warm start looks its state up by."""
    sources = dict(copied)  # a supplied file the snapshot does not hold was copied from disk first: HEAD's bytes
    base = manuscript.base
    for path in manuscript.supplied.keys() & manuscript.texts.keys():
        rel = os.path.relpath(path, manuscript.directory)
        if base is not None and path in base.digests:
            sources[rel] = base.digests[path]
        else:
            sources.pop(rel, None)  # a file HEAD does not hold: not part of HEAD's sources
    return sources
