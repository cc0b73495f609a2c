"""Where Python code may read a manuscript's files: its own tree, or a declared shared file in its repository.

A manuscript from a pull request names the files it reads (`\\input`, `\\bibliography`,
`% !patchwrite log = ...`). Each name is checked here before anything is opened: the real
path (symlinks followed) must stay inside the manuscript's directory, or, for a declared
bibliography or log, inside the repository holding it (the git work tree, else the pytest
rootdir); no component may be a dot-file (`.git/config`). Globs are bounded in matches and
time. A trusted run lifts the bound.
"""

from __future__ import annotations

import glob
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

MAX_GLOB_MATCHES = 1000
GLOB_SECONDS = 5.0
# the TeX installation: kpsewhich may find a system .bib there, which is no secret
_TEX_TREES = ("/usr/share/texlive", "/usr/share/texmf", "/usr/local/share/texmf", "/var/lib/texmf")


class OutsideTree(Exception):
    """A file name that leads outside the manuscript's tree; the caller reports it at its line."""

    def __init__(self, name: str, why: str = "") -> None:
        super().__init__(name)
        self.name = name
        self.why = why or "leads outside the manuscript's tree (or to a dot-file); it is not read"


def _inside(real: str, base: str) -> str | None:
    """Return `real` relative to `base` when it lies inside it, else None."""
    if real == base:
        return "."
    prefix = base.rstrip(os.sep) + os.sep
    return real[len(prefix) :] if real.startswith(prefix) else None


def _has_dot_part(relative: str) -> bool:
    return any(part.startswith(".") and part not in (".",) for part in relative.split(os.sep))


def _hard_linked(real: str) -> bool:
    """Return whether `real` is a file with another name somewhere (which may lie outside the tree)."""
    try:
        info = os.stat(real)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1


def repository_top(directory: Path, rootdir: Path | None = None) -> Path | None:
    """Return the git work tree holding `directory` (found by its `.git`), else `rootdir` when it holds it."""
    directory = Path(os.path.realpath(directory))
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    if rootdir is not None:
        real = Path(os.path.realpath(rootdir))
        if _inside(str(directory), str(real)) is not None:
            return real
    return None


@dataclass(frozen=True)
class Boundary:
    """The directories a manuscript's files may be read from."""

    tree: Path  # the manuscript's directory, real path
    shared: Path | None = None  # the repository holding it, for declared bibliographies and logs
    trusted: bool = False

    @classmethod
    def for_root(cls, root: Path, rootdir: Path | None = None, trusted: bool = False) -> Boundary:
        """Return the boundary of the manuscript rooted at `root`."""
        return cls.for_directory(Path(root).parent, rootdir, trusted)

    @classmethod
    def for_directory(cls, directory: Path, rootdir: Path | None = None, trusted: bool = False) -> Boundary:
        """Return the boundary of a manuscript whose files sit in `directory` (its root's directory)."""
        tree = Path(os.path.realpath(directory))
        return cls(tree, repository_top(tree, rootdir), trusted)

    def allowed(self, path: Path | str, *, shared: bool = False, tex_tree: bool = False) -> Path | None:
        """Return the real path of `path` when it may be read, else None (never opened either way)."""
        real = os.path.realpath(path)
        if self.trusted:
            return Path(real)
        bases = [self.tree]
        if shared and self.shared is not None:
            bases.append(self.shared)
        for base in bases:
            relative = _inside(real, str(base))
            if relative is not None and not _has_dot_part(relative) and not _hard_linked(real):
                return Path(real)
        if tex_tree and any(_inside(real, t) is not None for t in _TEX_TREES):
            return Path(real)
        return None

    def why_refused(self, path: Path | str, *, shared: bool = False) -> str:
        """Return why `allowed` refuses `path`: the message of its `outside_tree` violation."""
        real = os.path.realpath(path)
        for base in [self.tree, *([self.shared] if shared and self.shared is not None else [])]:
            relative = _inside(real, str(base))
            if relative is not None and _has_dot_part(relative):
                return "leads to a dot-file or into a dot-directory; it is not read"
            if relative is not None and _hard_linked(real):
                return "has a second hard link (the same file may sit outside the tree); it is not read"
        return OutsideTree("").why

    def require(self, path: Path | str, name: str, *, shared: bool = False) -> Path:
        """Return the real path of `path`; raise OutsideTree (naming `name`, as written) when it may not be read."""
        found = self.allowed(path, shared=shared)
        if found is None:
            raise OutsideTree(name, self.why_refused(path, shared=shared))
        return found

    def glob(self, pattern: str, base: Path, name: str) -> list[Path]:
        """Return the files matching `pattern` (relative to `base`) inside the boundary, bounded in count and time.

        Raise OutsideTree when the pattern's fixed part leaves the boundary, when every
        file it matches is refused (as naming that file would be), or the walk finds more
        than `MAX_GLOB_MATCHES` files or takes over `GLOB_SECONDS`.
        """
        full = os.path.normpath(os.path.join(base, pattern))
        fixed = full
        while glob.has_magic(fixed):
            fixed = os.path.dirname(fixed)
        if self.allowed(fixed, shared=True) is None and not (self.trusted and os.path.exists(fixed)):
            raise OutsideTree(name)
        started = time.monotonic()
        matches: list[Path] = []
        refused: list[str] = []
        for count, match in enumerate(glob.iglob(full, recursive=True)):
            if count >= MAX_GLOB_MATCHES or time.monotonic() - started > GLOB_SECONDS:
                raise OutsideTree(name, f"matches more than {MAX_GLOB_MATCHES} files or takes too long; name fewer")
            real = self.allowed(match, shared=True)
            if real is not None and real.is_file():
                matches.append(Path(match))
            elif real is None:
                refused.append(match)
        if not matches and refused:
            raise OutsideTree(name, f"matches only {os.path.basename(min(refused))}, which "
                                    + self.why_refused(min(refused), shared=True))  # fmt: skip
        return sorted(matches)
