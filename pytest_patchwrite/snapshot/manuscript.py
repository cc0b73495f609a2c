"""The snapshot of one manuscript (`Manuscript`): its root and every source file it inputs, read once
(`load_manuscript`); a candidate is derived from it (`Manuscript.derive`) without reading again. Root finding is
`snapshot.roots`, what the sources say `tex.texinputs` and `tex.magic`, the sandbox copy `files.manuscriptcopy`."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputTooLarge
from ..files.inputs import MB, limit_for, read_text, text_bytes, text_digest
from ..files.paths import Boundary
from ..tex.magic import magic_comments
from ..tex.texinputs import include_lines


def resolve_input(base: Path, name: str) -> Path | None:
    """Return the file `\\input{name}` reads, relative to the root's directory, or None."""
    name = name.strip()
    candidates = [base / name] if name.endswith(".tex") else [base / f"{name}.tex", base / name]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


# more files than any real manuscript inputs; a generated chain beyond it is cut short, not followed
MAX_FILES = 5000


@dataclass
class Manuscript:
    """The snapshot of one manuscript that every gate takes: the root and every source file it inputs, in reading
    order, with their texts read once (or supplied: a candidate's edit) and their content hashes.

    Everything a check derives from the sources (configuration, engine, shared bibliographies) is computed from these
    texts once and kept in the snapshot; a candidate is `derive`d from HEAD's snapshot without reading again what HEAD
    holds. `record` is the second stage: what the engine's own record of a compile adds (see `snapshot.EngineRecord`).
    """

    root: Path
    files: list[Path] = field(default_factory=list)
    texts: dict[Path, str] = field(default_factory=dict)
    missing: list[tuple[Path, int, str]] = field(default_factory=list)
    # names that may not be read: (file, line, name as written, why); never read
    outside: list[tuple[Path, int, str, str]] = field(default_factory=list)
    #: which files Python may read for it; made from the root when not given (the one place a snapshot's is made)
    boundary: Boundary = None  # type: ignore[assignment]  # always set by __post_init__
    #: sha256 of each text's UTF-8 bytes, the key of every cache (verdicts, warm state, parsed inputs)
    digests: dict[Path, bytes] = field(default_factory=dict)
    #: texts that did not come from the disk (an edit, a fixture's files), by real path: what the compile writes over
    supplied: dict[Path, str] = field(default_factory=dict)
    #: bytes of the other files read for this snapshot (bibliographies, logs; small ones, see `inputs.read_held`),
    #: by real path, shared with the snapshots derived from it: the copy and the gates read each once
    data: dict[Path, bytes] = field(default_factory=dict, repr=False)
    base: Manuscript | None = None  # the snapshot this one was derived from (HEAD, for a candidate)
    record: Any = None  # stage two, set after a compile: a `snapshot.EngineRecord`
    facts: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # derived once, see `fact`

    def __post_init__(self) -> None:
        if self.boundary is None:
            self.boundary = Boundary.for_root(self.root)

    @property
    def directory(self) -> Path:
        """Return the directory TeX runs in (inputs resolve against it)."""
        return self.root.parent

    @property
    def root_text(self) -> str:
        """Return the root file's text."""
        return self.texts[self.root]

    def fact(self, name: str, compute: Callable[[], Any]) -> Any:
        """Return a fact derived from the snapshot (engine, shared bibliographies, ...), computed on first use."""
        if name not in self.facts:
            self.facts[name] = compute()
        return self.facts[name]

    def magic(self) -> dict[str, str]:
        """Return the root's magic comments (`magic_comments`): the snapshot's own configuration."""
        return self.fact("magic", lambda: magic_comments(self.root_text))

    def held_bytes(self) -> dict[Path, bytes]:
        """Return {real path: bytes} of every text the snapshot holds: what a sandbox copy writes for those files."""
        # a supplied text the reading of the sources did not reach (a file `\\input` through a macro) is compiled too
        texts = {**self.supplied, **self.texts}
        return {**self.data, **{path: text_bytes(text) for path, text in texts.items()}}

    def derive(self, texts: dict[Path, str]) -> Manuscript:
        """Return the candidate snapshot: this one with some files' texts replaced (HEAD plus an edit).

        What this snapshot holds is not read again; only a file the candidate newly inputs is read from disk.
        """
        supplied = {**self.supplied, **{Path(p).resolve(): t for p, t in texts.items()}}
        return load_manuscript(self.root, supplied, boundary=self.boundary, known=self)


def load_manuscript(
    root: Path | str,
    overrides: dict[Path, str] | None = None,
    *,
    boundary: Boundary | None = None,
    known: Manuscript | dict[Path, str] | None = None,
) -> Manuscript:
    """Return the snapshot of the manuscript rooted at `root`, following `\\input`/`\\include`/`\\subfile` once each.

    Only files inside the manuscript's tree are read (see `paths.Boundary`); a name
    leading outside is recorded in `outside`. The walk is iterative: the depth of an
    `\\input` chain costs no stack. `overrides` replace files' texts; `known` is a snapshot
    whose texts stand for the disk (a candidate derived from HEAD reads nothing HEAD holds).
    """
    root = Path(root).resolve()
    overrides = {Path(p).resolve(): t for p, t in (overrides or {}).items()}
    base = known if isinstance(known, Manuscript) else None
    if isinstance(known, Manuscript):
        known_texts, known_digests = known.texts, known.digests
    else:
        known_texts, known_digests = {Path(p).resolve(): t for p, t in (known or {}).items()}, {}
    boundary = boundary or Boundary.for_root(root)
    manuscript = Manuscript(root, boundary=boundary, supplied=overrides, base=base)
    if base is not None:
        manuscript.data = base.data  # one store for HEAD and its candidates: what one read, the other need not
    seen: set[Path] = set()
    # the cap holds for the manuscript as a whole, so many files just under it cannot add up to hours of scanning
    cap, total = limit_for("manuscript"), 0

    def read(path: Path) -> list[tuple[int, str]]:
        nonlocal total
        seen.add(path)
        if path in overrides:
            text = overrides[path]
        elif path in known_texts:
            text = known_texts[path]
            if path in known_digests:
                manuscript.digests[path] = known_digests[path]
        else:
            text = read_text(path)
        if path not in manuscript.digests:
            manuscript.digests[path] = text_digest(text)
        total += len(text)
        if total > cap:
            raise InputTooLarge(
                path,
                f"brings the manuscript's text to more than {cap / MB:g} MB, the cap for a manuscript"
                " (raise it with PATCHWRITE_MAX_MANUSCRIPT_MB)",
            )
        manuscript.files.append(path)
        manuscript.texts[path] = text
        return include_lines(text, os.path.relpath(path.parent, manuscript.directory))

    # a stack of (file, its remaining includes), so the files come out in reading order
    stack: list[tuple[Path, list[tuple[int, str]]]] = [(root, read(root)[::-1])]
    while stack:
        path, pending = stack[-1]
        if not pending:
            stack.pop()
            continue
        lineno, name = pending.pop()
        lexical = manuscript.directory / name.strip()
        # an input above the paper (`\input{../macros}`) inside its repository is read, as the engine reads it
        # from the mirrored work tree (gates.mirror); nothing outside the repository, no dot-file
        if boundary.allowed(lexical, shared=True) is None and boundary.allowed(f"{lexical}.tex", shared=True) is None:
            # decided before looking: no existence oracle (the reason looks only inside the tree)
            manuscript.outside.append((path, lineno, name, boundary.why_refused(f"{lexical}.tex", shared=True)))
            continue
        target = resolve_input(manuscript.directory, name)
        if target is None:
            manuscript.missing.append((path, lineno, name))
            continue
        real = boundary.allowed(target, shared=True)
        if real is None:
            manuscript.outside.append((path, lineno, name, boundary.why_refused(target, shared=True)))
        elif real not in seen and len(seen) < MAX_FILES:
            stack.append((real, read(real)[::-1]))
    return manuscript


def add_engine_inputs(manuscript: Manuscript, names: list[str]) -> list[Path]:
    """Add the files the engine typeset that the reading of the source missed; return those added.

    `names` are relative to the root's directory (a compile's record: `CompileReport.typeset`), e.g. a
    file `\\input` through a macro. The same bounds hold as for any input: inside the repository, no
    dot-file, one link, the manuscript's cap.
    """
    boundary = manuscript.boundary
    known = set(manuscript.files)
    added: list[Path] = []
    total = sum(len(text) for text in manuscript.texts.values())
    for name in names:
        real = boundary.allowed(manuscript.directory / name, shared=True)
        if real is None or real in known or len(known) >= MAX_FILES:
            continue
        held = manuscript.supplied[real] if real in manuscript.supplied else None
        if held is None and manuscript.base is not None:
            held = manuscript.base.texts.get(real)
        if held is None and not real.is_file():
            continue
        text = held if held is not None else read_text(real)  # a candidate's edit of the file is what was compiled
        total += len(text)
        if total > limit_for("manuscript"):
            break  # the static reading already held the cap; what the engine adds past it stays unread
        known.add(real)
        manuscript.files.append(real)
        manuscript.texts[real] = text
        manuscript.digests[real] = text_digest(text)
        added.append(real)
    return added
