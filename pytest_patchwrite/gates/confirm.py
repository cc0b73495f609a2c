"""Warm = cold: the cold first run that confirms a warm compile, run beside it in a sandbox of its own.

A warm compile (gates.warm) reads HEAD's settled auxiliary files; a cold check's first run reads none. A
candidate whose first cold run stops at an error that only HEAD's `.aux` hides (`\\ifx\\pwok\\undefined`), or
whose warm run fails on what only HEAD's files define, would get another verdict warm than cold. So every warm
compile is paired with the cold check's first run on the same bytes: the warm verdict stands only when that run
stops at exactly the errors the warm first run stopped at (none, for a pass); otherwise the compile starts again
cold. The pair costs one engine run of latency, not two: the confirmation starts beside the warm run, in a second
job directory, with its own deadline, limits and font directory (sequentially after it on a one-core machine).

The second job directory holds hard links to the first one's files, taken before the warm state is seeded (the
seed replaces a file rather than writing into it). A hard link shares the inode, so a run that writes into one of
its inputs would change the other job's copy; instead of forbidding the write (which would change what the run
does), the confirmation is void when any shared inode changed while the two ran (its ctime moved: every write,
truncation or link change moves it, and nothing can move it back), and the compile starts again cold.

Draft mode (`pdflatex -draftmode`) is not used: it embeds no fonts, so a Type 1 file a manuscript's own map
names that cannot be read fails a normal run and passes a draft one (tests/test_warm.py), and it saved about a
tenth of one run here. Nor is the run stopped early: what HEAD's `.aux` defines stays defined to `\\end{document}`,
which reads the `.aux` again, so no point of the log is past where a missing definition can still fail the run.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.texlog import ERROR, FATAL, LogMessage, parse_tex_log, terminal_errors, unfinished_document
from . import fontmap, record
from .rerun import bib_tool_input, failed, read_log


def cores() -> int:
    """Return the number of CPUs this process may run on (its affinity mask, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def errors(messages: list[LogMessage]) -> list[LogMessage]:
    """Return the error messages of a run (what a stopped run is compared by)."""
    return [m for m in messages if m.severity in (ERROR, FATAL)]


@dataclass
class Linked:
    """The files a second job directory shares with the first by hard link: {path: (inode, ctime_ns)}."""

    files: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def seal(self) -> None:
        """Note each shared inode's ctime now (after the seed: its replacements moved the ctimes)."""
        for path in list(self.files):
            try:
                st = os.lstat(path)
            except OSError:
                del self.files[path]
                continue
            self.files[path] = (st.st_ino, st.st_ctime_ns)

    def intact(self) -> bool:
        """Return whether no shared inode was written (or replaced) since `seal`."""
        for path, (inode, ctime) in self.files.items():
            try:
                st = os.lstat(path)
            except OSError:
                return False
            if (st.st_ino, st.st_ctime_ns) != (inode, ctime):
                return False
        return True


def link_tree(source: Path, target: Path) -> Linked:
    """Fill `target` with `source`'s files as hard links (a copy where no link can be made); return the links."""
    linked = Linked()
    for dirpath, dirnames, filenames in os.walk(source):
        rel = Path(dirpath).relative_to(source)
        (target / rel).mkdir(parents=True, exist_ok=True)
        for name in dirnames + filenames:
            src, dst = Path(dirpath) / name, target / rel / name
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
            elif name in filenames:
                try:
                    os.link(src, dst, follow_symlinks=False)
                    linked.files[dst] = (0, 0)
                except OSError:
                    shutil.copy2(src, dst, follow_symlinks=False)
        dirnames[:] = [d for d in dirnames if not os.path.islink(Path(dirpath) / d)]
    return linked


MAP_VOID = "font map"  # a confirmation that read the cut font map looked up a font HEAD's run did not use


@dataclass
class FirstRun:
    """How a cold first run ended: `stopped` names a limit or "timeout" (then nothing is known), else `errors`
    are the errors it stopped at (empty: it did not stop)."""

    stopped: str = ""
    errors: list[LogMessage] = field(default_factory=list)


def judged(work: Path, job: str, entry: str, stderr: str = "", font_rule: fontmap.Rule | None = None) -> FirstRun:
    """Return how the cold first run that just ended in `work` went, read from its log (and what it wrote to
    stderr); with `font_rule` it read the cut font map and is void (`MAP_VOID`) unless `fontmap.faithful`."""
    recorded = record.recording(work, job)
    read = recorded.inputs
    log = read_log(work / f"{job}.log")
    if font_rule is not None and not fontmap.faithful(recorded, log, font_rule):
        return FirstRun(MAP_VOID)
    messages = parse_tex_log(log, entry, lambda f: (work / f).is_file() or Path(f).is_file(), read)
    messages += terminal_errors(stderr, log, entry, read)
    messages += unfinished_document(recorded, job, entry, messages)
    stops = failed(messages, allow_no_output=bib_tool_input(work, job)[0] is not None)
    return FirstRun("", errors(messages) if stops else [])


class Confirmation:
    """One cold first run, started beside the warm run (`parallel`) or run when its answer is asked for."""

    def __init__(self, run: Callable[[threading.Event], FirstRun], parallel: bool) -> None:
        self._run = run
        self._cancel = threading.Event()
        self._result: FirstRun | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if parallel:
            self._thread = threading.Thread(target=self._work, daemon=True, name="patchwrite-confirm")
            self._thread.start()

    def _work(self) -> None:
        try:
            self._result = self._run(self._cancel)
        except BaseException as exc:  # an environment fault: raised again in the caller's thread
            self._error = exc

    def result(self) -> FirstRun:
        """Return how the first run ended (running it now when it was not started beside); raise what it raised."""
        if self._thread is None:
            self._work()
        else:
            self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def cancel(self) -> None:
        """Stop the run, if started, and wait until its sandbox is gone (the answer is no longer needed)."""
        self._cancel.set()
        if self._thread is not None:
            self._thread.join()


def agrees(warm_first: list[LogMessage], cold_first: FirstRun, linked: Linked) -> bool:
    """Return whether the warm verdict is the cold one: the cold first run ran to its end on unchanged inputs and
    stopped at exactly the errors the warm first run stopped at (none when the warm run went on)."""
    return not cold_first.stopped and linked.intact() and cold_first.errors == warm_first
