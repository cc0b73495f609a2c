"""What of the repository the sandbox copy holds: the manuscript's directory, or the work tree when it reaches above.

A paper that names anything above its directory (`\\includegraphics{../figures/f.pdf}`,
`\\graphicspath{{../figures/}}`, `\\input{../macros}`, `\\bibliography{../refs}`) builds under
latexmk because latexmk sees the whole checkout. The copy then mirrors the repository holding
the paper (its git work tree, else the pytest rootdir) minus dot-files and dot-directories
(`.git`), within the same cap as a paper directory; the engine inside the sandbox sees what
latexmk sees, and nothing outside the repository. The cost is one more copy of the repository's
other files per compile (bench/bench_compile.py measures it). Python's own reads do not widen:
the gates read only the manuscript's files and its declared logs and bibliographies.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..errors import InputTooLarge
from ..files.envfaults import changed_during_check
from ..files.manuscriptcopy import copy_manuscript_dir
from ..files.paths import Boundary
from ..files.tempfiles import remove_tree
from ..files.treecopy import copy_beneath
from ..snapshot.manuscript import Manuscript
from ..snapshot.snapshot import shared_bibliographies
from ..tex.texmask import mask


def refers_above(manuscript: Manuscript) -> bool:
    """Return whether a file of the manuscript names a path above its directory (`../`) outside comments."""
    return any("../" in text and "../" in mask(text)[0] for text in manuscript.texts.values())


def copy_for_compile(
    manuscript: Manuscript, tree: Path, boundary: Boundary, job: str
) -> tuple[Path, dict[str, bytes], str]:
    """Copy what the compile of a manuscript snapshot needs into `tree`; return (the root's directory there,
    {relpath: sha256}, what was mirrored: "" for the paper's directory alone, "repository", or "bibliographies").

    The snapshot's texts are written from the snapshot, the rest copied. Relative paths are relative to the root's
    directory (`../figures/f.pdf` for a mirrored file).
    """
    root = manuscript.root
    held, digests = manuscript.held_bytes(), manuscript.digests
    top = boundary.shared
    if top is None or top == boundary.tree:
        return tree, copy_manuscript_dir(root.parent, tree, job, held=held, digests=digests, store=manuscript.data), ""
    paper = boundary.tree.relative_to(top)
    work = tree / paper
    if refers_above(manuscript):
        try:
            copied = copy_manuscript_dir(top, tree, job, job_dir=paper.as_posix(), held=held, digests=digests,
                                         store=manuscript.data)  # fmt: skip
        except InputTooLarge:
            for entry in tree.iterdir():  # over the cap: fall back to the declared bibliographies alone
                _remove(entry)
        else:
            work.mkdir(parents=True, exist_ok=True)
            return work, {os.path.relpath(tree / rel, work): digest for rel, digest in copied.items()}, "repository"
    shared = shared_bibliographies(manuscript)
    if not shared:
        return tree, copy_manuscript_dir(root.parent, tree, job, held=held, digests=digests, store=manuscript.data), ""
    work.mkdir(parents=True)
    copied = copy_manuscript_dir(root.parent, work, job, held=held, digests=digests, store=manuscript.data)
    for path in shared:
        target = tree / path.relative_to(top)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path in held:  # read for the cite lock already: its bytes, not the disk's again
            target.write_bytes(held[path])
            copied[os.path.relpath(target, work)] = hashlib.sha256(held[path]).digest()
        else:  # checked a moment ago, opened now: never through a link another process swapped in since
            digest = copy_beneath(top, path.relative_to(top).as_posix(), target)
            if digest is None:
                raise changed_during_check(path, "the shared bibliography became a link, a non-regular file or "
                                           "vanished", stage="compile")  # fmt: skip
            copied[os.path.relpath(target, work)] = digest
    return work, copied, "bibliographies"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        remove_tree(path)
    else:
        path.unlink()
