"""Manuscripts on disk: root detection, magic comments, and the files a root pulls in."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, InputTooLarge, PatchwriteError
from ..files.inputs import (
    HELD_FILE_BYTES,
    MB,
    decode,
    hold,
    limit_for,
    note_read,
    open_regular,
    read_prefix,
    read_text,
    text_bytes,
    text_digest,
)
from ..files.paths import Boundary, repository_top
from ..files.treecopy import CopyCap, copy_tree
from ..tex.texmask import mask

ENGINES = ("pdflatex", "xelatex", "lualatex")
_SKIP_DIRS = {"__pycache__", "node_modules"}
_STALE_SUFFIXES = (".aux", ".log", ".pdf", ".bbl", ".blg", ".bcf", ".run.xml", ".toc", ".lof", ".lot", ".out",
                   ".fls", ".fdb_latexmk", ".synctex.gz", ".nav", ".snm", ".xdv")  # fmt: skip

_MAGIC = re.compile(r"^\s*%\s*!\s*(?P<scope>TeX|TEX|tex|patchwrite)\s+(?:TS-)?(?P<key>[\w-]+)\s*=\s*(?P<value>.*?)\s*$")
_DOCCLASS = re.compile(r"\\documentclass\b")
_BEGIN_DOC = re.compile(r"\\begin\{document\}")
_INCLUDE = re.compile(
    r"\\(?P<cmd>input|include|subfile|subfileinclude|InputIfFileExists)\s*\{(?P<name>[^{}]+)\}"
    # TeX's own syntax: `\input nums` (the name ends at a space, a brace, a backslash or a comment)
    r"|\\input(?:\s+|(?=[./]))(?P<bare>[^\s{}\\%]+)"
    # the import package: \import{dir/}{file} (from the root's directory), \subimport{dir/}{file} (from the file's)
    r"|\\(?P<imp>import|subimport|inputfrom|subinputfrom|includefrom|subincludefrom)\*?\s*"
    r"\{(?P<dir>[^{}]*)\}\s*\{(?P<file>[^{}]+)\}"
)


def include_name(match: re.Match[str], here: str = ".") -> str:
    """Return the file an `_INCLUDE` match reads, relative to the root's directory (`here`: the including file's)."""
    if match.group("name") is not None:
        return match.group("name")
    if match.group("bare") is not None:
        return match.group("bare")
    base = here if match.group("imp").startswith("sub") else "."
    return os.path.normpath(os.path.join(base, match.group("dir").strip(), match.group("file").strip()))


def magic_comments(text: str) -> dict[str, str]:
    """Return `% !TEX key = value` and `% !patchwrite key = value` comments, keyed `tex.key` / `patchwrite.key`.

    Like TeX editors, only the comment lines at the top of the file count.
    """
    found: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("%"):
            break
        match = _MAGIC.match(line)
        if match:
            scope = "patchwrite" if match.group("scope") == "patchwrite" else "tex"
            found.setdefault(f"{scope}.{match.group('key').lower()}", match.group("value"))
    return found


def magic_line(text: str, key: str) -> int | None:
    """Return the line of the first top-of-file magic comment `key` (`tex.root`, `patchwrite.log`), or None."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if not line.lstrip().startswith("%"):
            return None
        if key in magic_comments(line):
            return number
    return None


_BIBLATEX = re.compile(r"\\usepackage\s*(?:\[(?P<options>[^\]]*)\])?\s*\{[^}]*\bbiblatex\b[^}]*\}")


def bib_backend(text: str) -> str:
    """Return the tool that reads the bibliography: `biber` for biblatex (unless backend=bibtex), else `bibtex`."""
    preamble = mask(text)[0].split("\\begin{document}", 1)[0]
    found = _BIBLATEX.search(preamble)
    if found is None:
        return "bibtex"
    return "bibtex" if re.search(r"backend\s*=\s*bibtex", found.group("options") or "") else "biber"


def is_root(text: str) -> bool:
    """Return whether `text` is a root document: `\\documentclass` before `\\begin{document}`."""
    masked = mask(text)[0]
    doc = _DOCCLASS.search(masked)
    if not doc:
        return False
    begin = _BEGIN_DOC.search(masked)
    return begin is None or doc.start() < begin.start()


def input_spans(text: str) -> list[tuple[int, int, str]]:
    """Return (start, end, name) of every `\\input`/`\\include`/`\\subfile` outside comments and verbatim."""
    return [(m.start(), m.end(), include_name(m)) for m in _INCLUDE.finditer(mask(text)[0])]


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


def _includes(text: str, here: str = ".") -> list[tuple[int, str]]:
    return [
        (lineno, include_name(match, here))
        for lineno, line in enumerate(mask(text)[0].splitlines(), start=1)
        for match in _INCLUDE.finditer(line)
    ]


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
        return _includes(text, os.path.relpath(path.parent, manuscript.directory))

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


MAX_COPY_BYTES = 512 * 1024 * 1024
MAX_COPY_FILES = 20000


#: what the gates may read after a compile besides the sources: bibliographies and experimental logs
_READ_LATER = (".bib", ".json", ".jsonl", ".csv", ".tsv", ".toml", ".yaml", ".yml", ".txt")


def _worth_keeping(rel: str, size: int) -> bool:
    return size <= HELD_FILE_BYTES and rel.lower().endswith(_READ_LATER)


def copy_manuscript_dir(
    src: Path,
    dst: Path,
    job: str,
    *,
    max_bytes: int = MAX_COPY_BYTES,
    job_dir: str = "",
    held: dict[Path, bytes] | None = None,
    digests: dict[Path, bytes] | None = None,
    store: dict[Path, bytes] | None = None,
) -> dict[str, bytes]:
    """Copy a manuscript directory; return {relpath: sha256 of its bytes} for each copied file.

    A file whose real path is in `held` (a snapshot's texts) gets those bytes, not the disk's, and is not opened
    again: the checked bytes are the compiled bytes (`digests`: their sha256 when known). Small bibliographies and
    logs it copies are kept in `store` (a snapshot's `data`), so the gates after the compile do not read them again.

    Only regular files and directories inside `src` are copied, opened so that no
    other process can swap one for a symlink in between (see `treecopy`). Left out:
    dot-files and dot-directories (VCS data such as `.git/config`, caches) and links
    to them, the job's stale build outputs (in `job_dir`, the paper's directory
    relative to `src`), symlinks that leave the directory (a pull request must not
    smuggle `/etc/passwd` in as `notes.tex`), and files with more than one hard link
    (one of the names may live outside). Raise InputTooLarge past `max_bytes` or
    `MAX_COPY_FILES` files.
    """
    prefix = f"{job_dir.strip('/')}/" if job_dir.strip("/") else ""
    stale = {f"{prefix}{job}{suffix}" for suffix in _STALE_SUFFIXES} if job else set()

    def keep(rel: str, is_dir: bool) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return name not in _SKIP_DIRS if is_dir else rel not in stale

    try:
        top = Path(os.path.realpath(src))
        inside = {p.relative_to(top).as_posix(): (data, (digests or {}).get(p))
                  for p, data in (held or {}).items() if p.is_relative_to(top)}  # fmt: skip
        captured: dict[str, bytes] = {}
        copied = copy_tree(src, dst, keep=keep, max_bytes=max_bytes, max_files=MAX_COPY_FILES, held=inside,
                           capture=_worth_keeping if store is not None else None, captured=captured)  # fmt: skip
        for rel, data in captured.items():
            hold(store if store is not None else {}, top / rel, data)
        return copied
    except CopyCap:
        raise InputTooLarge(
            src,
            f"the manuscript's directory holds more than {max_bytes >> 20} MB or {MAX_COPY_FILES} files"
            "; the sandbox copy is capped",
        ) from None
