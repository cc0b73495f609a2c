"""One snapshot per check: the `Manuscript` every gate takes, built once, and what is derived from it.

A check (or one candidate of `apply`) reads the manuscript once into a `manuscript.Manuscript`: the texts of every
source file, their content hashes, the root's configuration, the `Boundary`. The gates take that object; none of
them reads the disk again for what it holds or rebuilds a boundary from a path. This module holds what is derived
from a snapshot and shared by the gates:

- stage one (the sources, before any compile): the engine and why (`engine`), the bibliographies mirrored from
  above the paper (`shared_bibliographies`), the content key of the compiled sources (`source_digests`);
- stage two (after a compile): `EngineRecord`, what the engine's own record adds (the files it read and typeset,
  the bibliographies it used, the keys it cited), set on `Manuscript.record` by the compile gate (`take_record`)
  for the gates that run after it (`gates.citelock.engine_bibliographies` resolves its bibliographies);
- `Snapshots`: the per-transaction memo that rides in `PatchContext`, so the gates of one `try_patch` share HEAD's
  snapshot and the candidate's, derived from it without touching the disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files.paths import Boundary
from ..model import PatchContext
from ..tex.latex import scan
from .engines import engine_and_reason, read_local_styles
from .manuscript import Manuscript, add_engine_inputs, load_manuscript
from .roots import locate


def engine(manuscript: Manuscript) -> tuple[str | None, str]:
    """Return (the engine the manuscript needs or None for any, why): computed once per snapshot.

    A candidate whose root text is HEAD's shares HEAD's answer (latexmkrc and local class files are not edits).
    """
    base = manuscript.base
    if base is not None and base.texts.get(base.root) == manuscript.root_text and "engine" in base.facts:
        return base.facts["engine"]
    return manuscript.fact(
        "engine", lambda: engine_and_reason(manuscript.root, manuscript.root_text, lambda: local_styles(manuscript))
    )


def local_styles(manuscript: Manuscript) -> list[str]:
    """Return the texts of the local class and style files the root loads (`engines.read_local_styles`), read once
    per snapshot; a candidate whose root text is HEAD's shares HEAD's."""
    base = manuscript.base
    if base is not None and base.texts.get(base.root) == manuscript.root_text and "local_styles" in base.facts:
        return base.facts["local_styles"]
    return manuscript.fact("local_styles", lambda: read_local_styles(manuscript.root, manuscript.root_text))


def shared_bibliographies(manuscript: Manuscript) -> list[Path]:
    """Return the declared bibliographies above the paper's directory that the sandbox mirrors (once per snapshot)."""
    return manuscript.fact("shared_bibliographies", lambda: _shared_bibliographies(manuscript))


def _shared_bibliographies(manuscript: Manuscript) -> list[Path]:
    """Return the real paths of declared bibliographies above the manuscript's directory that its repository holds
    (read each time: `shared_bibliographies` is the memo).

    `\\bibliography{../refs}` beside a `paper/` directory is a common layout; the
    sandbox mirrors exactly these files, at the same place relative to the paper.
    """
    boundary = manuscript.boundary
    if boundary.shared is None:
        return []
    found: list[Path] = []
    for path in manuscript.files:
        if "../" not in manuscript.texts[path]:
            continue  # the common case, decided without the full scan: such a name is in the raw text too
        for name, _line in scan(manuscript.texts[path], str(path)).bibliographies:
            name = name.strip()
            if not name.startswith("../"):
                continue
            for candidate in (name, f"{name}.bib"):
                target = manuscript.directory / candidate
                real = Boundary(boundary.shared).allowed(target)
                if real is not None and real.is_file() and real not in found:
                    found.append(real)
                    break
    return found


@dataclass
class EngineRecord:
    """Stage two of a snapshot: what the engine's own record of a compile adds to what the sources say.

    Set on `Manuscript.record` by the compile gate (`take_record`); the gates that run after the compile read it
    there. `inputs`: the files of the tree the engine read (its `-recorder` `.fls`), relative to the paper's
    directory; `bibliographies`: the databases bibtex or biber used (`\\bibdata` of the `.aux` files, the `.bcf`
    datasources); `typeset`: of `inputs`, the files `\\input` typeset (`gates.record.typeset_inputs`); `cited`:
    the keys the engine cited (`gates.record.bib_record`), None when the record is another snapshot's (`borrow`).
    The same lists as the `CompileReport` fields of those names. `passed`: whether that compile passed; `added`:
    the files the record added to the snapshot's reading.
    """

    inputs: list[str] = field(default_factory=list)
    bibliographies: list[str] = field(default_factory=list)
    typeset: list[str] = field(default_factory=list)
    cited: list[str] | None = None
    passed: bool = False
    added: list[Path] = field(default_factory=list)
    resolved: list[Path] | None = None  # `gates.citelock.engine_bibliographies`, once per record
    # the keys the job defined itself (`gates.record.job_definitions`: REVTeX's footnotes, its `\bibcite`s) and
    # whether `cited` is what the last run wrote (its `.aux`/`.bcf`); None and False when borrowed
    defined: list[str] | None = None
    cites_recorded: bool = False


def take_record(manuscript: Manuscript, report: Any) -> EngineRecord:
    """Return the engine record of a compile report (a `CompileReport`), set as the snapshot's stage two.

    The files the engine typeset that the reading of the sources missed (a file `\\input` through a macro) join
    the snapshot's files, so every flow that compiled checks them: `check`, the items, `apply`, `try_patch`, the
    fixtures and the diff item all take the snapshot the compile gate compiled.
    """
    record = EngineRecord(list(report.inputs), list(report.bibliographies), list(report.typeset),
                          list(getattr(report, "cited", [])), bool(report.ok))  # fmt: skip
    record.defined = list(getattr(report, "defined", []))
    record.cites_recorded = bool(getattr(report, "cites_recorded", False))
    manuscript.record = record
    record.added = add_engine_inputs(manuscript, record.typeset)
    return record


def borrow_record(manuscript: Manuscript, other: Manuscript) -> None:
    """Give a snapshot that was not compiled (HEAD, beside a compiled candidate) the other's bibliographies and
    typeset files, but not its cited keys: what HEAD cites only HEAD's own compile tells."""
    if manuscript.record is not None or other.record is None:
        return
    record = EngineRecord(list(other.record.inputs), list(other.record.bibliographies), list(other.record.typeset),
                          None, other.record.passed)  # fmt: skip
    manuscript.record = record
    record.added = add_engine_inputs(manuscript, record.typeset)


@dataclass
class Snapshots:
    """The snapshots of one transaction (`try_patch`): HEAD's and the candidate's per root, each built once.

    `head` holds the texts the transaction read under its lock (the edited file's HEAD text), so a gate never reads
    the edited file again; the candidate is derived from HEAD's snapshot by replacing the edited file's text.
    """

    head: dict[Path, str] = field(default_factory=dict)  # real path -> HEAD text, read by the transaction
    edited: dict[Path, str] = field(default_factory=dict)  # real path -> candidate text
    built: dict[tuple[Path, Boundary], tuple[Manuscript, Manuscript]] = field(default_factory=dict)
    located: dict[Path, tuple[Path, Manuscript | None]] = field(default_factory=dict)

    def root(self, path: Path | str) -> Path:
        """Return the root manuscript that reads `path` (`roots.locate`, from HEAD's text: not read again)."""
        real = Path(path).resolve()
        if real not in self.located:
            self.located[real] = locate(real, text=self.head.get(real))
        return self.located[real][0]

    def pair(self, root: Path | str, boundary: Boundary) -> tuple[Manuscript, Manuscript]:
        """Return (HEAD's snapshot, the candidate's) of the manuscript rooted at `root` within `boundary`."""
        key = (Path(root).resolve(), boundary)
        if key not in self.built:
            seeds = [m for _, m in self.located.values() if m is not None and m.root == key[0]]
            if seeds and seeds[0].boundary == boundary:
                head = seeds[0]  # root finding loaded it, from the same texts
            else:  # what root finding read under the lock stands for the disk under another boundary too
                known = dict(seeds[0].texts) if seeds else None
                head = load_manuscript(key[0], self.head, boundary=boundary, known=known)
            head.supplied = {}  # HEAD's texts are the disk's, read under the lock
            self.built[key] = (head, head.derive(self.edited))
        return self.built[key]


def transaction(context: PatchContext, text: str) -> Snapshots:
    """Return the snapshots of the transaction judging `text` as the new content of `context.path`.

    The transaction's own (`context.snapshots`) when they are of this candidate, so every gate of one `try_patch`
    shares them; else new ones for this call (a gate called on its own).
    """
    real = Path(context.path).resolve()
    edited = {real: text, **{Path(p).resolve(): t for p, t in context.files.items()}}
    snapshots = context.snapshots
    if not isinstance(snapshots, Snapshots) or snapshots.edited != edited:
        snapshots = Snapshots(head={real: context.head}, edited=edited)
    return snapshots


def root_of(context: PatchContext, text: str) -> Path:
    """Return the root a gate without one of its own judges: the manuscript that reads `context.path`."""
    return transaction(context, text).root(context.path)


def pair_for(context: PatchContext, text: str, root: Path | str, boundary: Boundary) -> tuple[Manuscript, Manuscript]:
    """Return (HEAD's snapshot, the candidate's) for a gate judging `text` as the new content of `context.path`.

    The transaction's `Snapshots` (in `context.snapshots`) when they are of this candidate, so every gate of one
    `try_patch` shares them; else built for this call (a gate called on its own).
    """
    return transaction(context, text).pair(root, boundary)
