"""Finding the root manuscript a file belongs to (`find_root`, `locate`), and the one rule of a walk for roots
(`walked_dirs`, `peek_text`): `patchwrite check DIR`, `--patchwrite-bind`, collection and the MCP server's
`list_manuscripts` use it."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError, PatchwriteError
from ..files.inputs import decode, note_read, open_regular, read_prefix, read_text
from ..files.paths import Boundary, repository_top
from ..tex.magic import magic_comments, magic_line
from ..tex.texinputs import is_root
from .manuscript import Manuscript, load_manuscript

#: how many `*.tex` files per directory level root finding looks at, and how much of each
MAX_ROOT_CANDIDATES = 64
ROOT_PEEK_BYTES = 200_000


#: folders a walk for root manuscripts never enters (beside every dot-folder), as pytest's `norecursedirs` has them
ROOT_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "build", "dist", "venv", "CVS", "_darcs", "{arch}"})


def walked_dirs(here: str | Path, names: list[str]) -> list[str]:
    """Return the sub-folders of `here` a walk for root manuscripts enters, sorted: the one skip rule of
    `patchwrite check DIR`, `--patchwrite-bind` and the MCP server's `list_manuscripts` (no link to a folder)."""
    return sorted(
        d
        for d in names
        if not d.startswith(".")
        and d not in ROOT_SKIP_DIRS
        and not d.endswith(".egg")
        and not os.path.islink(os.path.join(here, d))
    )


def peek_text(path: Path | str) -> str:
    """Return the first `ROOT_PEEK_BYTES` of a file as text, enough to tell a root (`is_root`); raise InputError
    (`NotRegularFile` for a FIFO or device) as `inputs.read_prefix` does."""
    return read_prefix(path, ROOT_PEEK_BYTES).decode("utf-8", errors="replace")


def _peek(path: Path) -> tuple[bytes, os.stat_result]:
    """Return the first `ROOT_PEEK_BYTES` of a regular file and its fstat; raise InputError for anything else."""
    fd, info = open_regular(path)
    try:
        return os.read(fd, ROOT_PEEK_BYTES), info
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


def find_root(path: Path | str, levels: int = 3) -> Path:
    """Return the root manuscript that reads `path`: itself, its `% !TEX root`, or a root that inputs it nearby."""
    return locate(path, levels)[0]


def locate(path: Path | str, levels: int = 3, text: str | None = None) -> tuple[Path, Manuscript | None]:
    """Return (the root that reads `path`, as `find_root` finds it; the snapshot loaded to learn it, or None).

    `text`: the file's text when the caller already read it (it is not read again); a root found by its inputs is
    read once, the snapshot returned holds it.
    """
    path = Path(path).resolve()
    text = read_text(path) if text is None else text
    if is_root(text):
        return path, None
    # never look above the repository holding the file: a parent directory is someone else's
    top = repository_top(path.parent) or path.parents[min(levels, len(path.parents)) - 1]
    bound = Boundary(top)
    named = magic_comments(text).get("tex.root")
    if named and (path.parent / named).is_file():
        real = bound.allowed(path.parent / named)
        if real is not None and repository_top(path.parent) is None and real.parent not in path.parents:
            real = None  # outside a repository only the file's own directories are its tree, no sibling's
        if real is None:
            raise InputError(
                path,
                f"`% !TEX root = {named}` names a file outside this file's repository (or a dot-file); "
                "it is never read: name the root inside the repository, or check the root itself",
                line=magic_line(text, "tex.root"),
                reason="outside_tree",
            )
        return real, None
    directory = path.parent
    roots: list[Path] = []  # roots nearby that do not read the file by any `\\input` line we can follow
    known = {path: text}  # what was read: a peek that was the whole file is not read again (a sibling section)
    peeks: dict[Path, tuple[os.stat_result, bytes]] = {}
    for _ in range(levels):
        # a bounded look: the first few dozen regular files, a peek at their head, never a FIFO
        for candidate in sorted(directory.glob("*.tex"))[:MAX_ROOT_CANDIDATES]:
            if candidate.resolve() in known:
                continue  # the file itself, which is no root
            try:
                head, info = _peek(candidate)
                if len(head) == info.st_size:
                    known[candidate.resolve()] = decode(head, candidate)
                    peeks[candidate.resolve()] = (info, head)
                if not is_root(head.decode("utf-8", "replace")):
                    continue
                loaded = load_manuscript(candidate, known=known)
                roots.append(candidate)
                if path in loaded.files:
                    for read in loaded.files:  # a commit compares them before its swap, as any file it read
                        if read in peeks:
                            note_read(read, *peeks[read])
                    return loaded.root, loaded
            except PatchwriteError:
                continue
        if directory.parent == directory or directory == top:
            break
        directory = directory.parent
    if roots:
        # a fragment compiled on its own fails with errors that are not the edit's (`\\section` undefined, ...):
        # a root nearby most likely reads it through a macro, which only the engine or the user can say
        nearest = os.path.relpath(roots[0], path.parent)
        raise InputError(
            path,
            f"no root manuscript reads this file through an `\\input` line patchwrite can follow (nearby root: "
            f"{nearest}); a file read through a macro needs `% !TEX root = {nearest}` on a line of its own, "
            "or check the root itself",
        )
    return path, None
