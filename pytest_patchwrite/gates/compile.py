"""The compile gate: a real engine in a private sandbox, a verdict read from its log (its report: `gates.report`)."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from ..engine import sandbox, sandboxcmd, texlog, unconfined
from ..engine.biblog import parse_blg
from ..engine.pdftext import PDF_SECONDS, read_pdf
from ..engine.sandboxlimits import Limits
from ..engine.texlog import ERROR, LogMessage, Recording, needs_rerun, parse_tex_log, terminal_errors
from ..files import envfaults
from ..files.inputs import text_bytes
from ..files.paths import Boundary
from ..model import GateResult, PatchContext, Violation, failing
from ..snapshot import snapshot
from ..snapshot.engines import ENGINES
from ..snapshot.manuscript import Manuscript, load_manuscript
from . import cachetrust, confirm, fontcache, fontmap, mirror, outcomes, record, verdicts, warm
from .located import located_violations, relocate
from .report import PACKAGE_OF, CompileReport, EngineMissing
from .rerun import aux_state, bib_tool_input, failed, read_log, settling
from .verdicts import default_cache_dir

# every root runs under this job name: a file name from a pull request never reaches a command line or a shell
JOB = "patchwrite"
# the name a root gets inside the sandbox when its own name is not harmless (`x$(cmd).tex`)
SAFE_ROOT = "patchwrite-root.tex"


class CompileGate:
    """Compile a candidate with a real engine; pass only on a clean log and a real PDF."""

    stage = "compile"

    def __init__(
        self,
        root: Path | str | None = None,
        *,
        engine: str | None = None,
        default_engine: str = "pdflatex",
        timeout: float = 60.0,
        max_runs: int = 5,
        resolve: bool = True,
        cache_dir: Path | str | None = None,
        use_cache: bool = True,
        trusted: bool = False,
        limits: Limits | None = None,
        extract_text: bool = False,
        warm_starts: bool = True,
        rootdir: Path | None = None,
    ) -> None:
        for name in (engine, default_engine):
            if name is not None and name not in ENGINES:
                raise ValueError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
        self.root = Path(root) if root is not None else None
        self.engine = engine
        self.default_engine = default_engine
        self.timeout = timeout
        self.max_runs = max_runs
        self.resolve = resolve
        # where verdicts and warm states are kept: never inside the work tree being checked (gates.cachetrust)
        self.cache_dir: Path | None = Path(cache_dir) if cache_dir else default_cache_dir()
        self._configured_cache = Path(cache_dir) if cache_dir else None
        self.use_cache = use_cache
        self.extract_text = extract_text
        # trusted: the manuscript's author is trusted, so engines run without the OS sandbox and nothing is refused
        self.trusted = trusted
        self.limits = limits or Limits.from_env()
        # warm_starts: begin from the settled auxiliary files of an earlier compile of the manuscript (gates.warm)
        self.warm_starts = warm_starts and resolve
        self.rootdir = rootdir  # bounds a mirrored shared bibliography when no git work tree does
        self.compiles = 0
        self.cache_hits = 0
        self.cache_rejected = 0  # entries on disk whose HMAC did not verify, ignored
        # warm = cold: warm compiles confirmed by a cold first run beside them, and those it sent back to a cold
        # compile (gates.confirm)
        self.confirmations = 0
        self.confirmations_failed = 0
        # warm runs that read a cut font map (gates.fontmap), and those of them that had to start again cold
        self.maps_cut = 0
        self.maps_void = 0
        self._fonts: sandboxcmd.FontDirs | None = None  # the current compile's (fontcache)
        self._texts: dict[Path, str] = {}  # the current compile's snapshot texts (where violations are located)
        self._stop = ""  # what stopped the last tool run: a sandbox limit or "timeout" (gates.outcomes)
        self._outcome: sandbox.Outcome | None = None  # how the last tool run ended
        self.mirrored = ""  # what of the repository the last copy mirrored (gates.mirror)
        # pages (pagesflow): told the passing PDF and its cache key while the sandbox still holds it
        self.pdf_sink: Callable[[Path, str], None] | None = None
        self.last_key = ""  # the cache key of the last compile

    # -- the Gate protocol ------------------------------------------------------------
    def check(self, text: str, context: PatchContext) -> GateResult:
        """Return the verdict on the manuscript with `context.path` replaced by `text`."""
        root = self.root or snapshot.root_of(context, text)
        head, candidate = snapshot.pair_for(context, text, root, self.boundary(root))
        report = self.compile(candidate)
        if self.resolve:  # after one pass (the stress harness) every citation is undefined: nothing to compare
            context.records["compile"] = report
            context.records["compile_head"] = lambda: self.compile(head)  # HEAD's snapshot, not read again
        details = {"engine": report.engine, "runs": report.runs, "start": report.start}
        return GateResult(report.ok, report.violations, "compile", report.seconds, details)

    # -- compiling --------------------------------------------------------------------
    def engine_for(self, manuscript: Manuscript) -> str:
        """Return the engine: the gate's argument, else what the snapshot needs (`snapshot.engine`, decided once per
        snapshot), else the default."""
        if self.engine:  # a pinned engine: no need to read latexmkrc and local class files
            return self.engine
        return snapshot.engine(manuscript)[0] or self.default_engine

    def boundary(self, root: Path | str) -> Boundary:
        """Return where this gate's Python code may read the manuscript rooted at `root` (see `paths.Boundary`)."""
        return Boundary.for_root(Path(root).resolve(), self.rootdir, self.trusted)

    def snapshot(self, root: Path | str, overrides: dict[Path, str] | None = None) -> Manuscript:
        """Return the snapshot of the manuscript at `root` as on disk, with some files' texts replaced."""
        head = load_manuscript(root, boundary=self.boundary(root))
        return head.derive(overrides) if overrides else head

    def compile(
        self, root: Path | str | Manuscript, overrides: dict[Path, str] | None = None, *, warm_start: bool = True
    ) -> CompileReport:
        """Return the report of compiling a manuscript snapshot in a fresh sandbox (or of `root` as on disk, with
        some files' texts replaced by `overrides`).

        With `warm_start` (and the gate's `warm_starts`) the sandbox starts from a kept state of the manuscript when one
        exists; the verdict is the cold one (see gates.warm), only the number of runs differs.
        """
        manuscript = root if isinstance(root, Manuscript) else self.snapshot(root, overrides)
        report = self._compile(manuscript, warm_start)
        # stage two of the snapshot: what the engine's own record adds, for the gates that run after the compile
        snapshot.take_record(manuscript, report)
        return report

    def _compile(self, manuscript: Manuscript, warm_start: bool) -> CompileReport:
        root = manuscript.root
        self._texts = manuscript.texts
        engine = self.engine_for(manuscript)
        if shutil.which(engine) is None:
            raise EngineMissing(f"{engine} is not installed (Debian package {PACKAGE_OF[engine]})")
        started = time.perf_counter()
        confined = not self.trusted and sandboxcmd.available()
        if not self.trusted and not confined:
            unconfined.warn_once()
        start = warm.Start()
        rejected: list[str] = []
        self.cache_dir = cachetrust.usable_dir(self._configured_cache, root, self.rootdir)
        with (
            envfaults.translated("the compile's sandbox"),
            sandbox.job_directory() as tree,
            fontcache.job_fonts(confined) as self._fonts,
            ExitStack() as stack,
        ):
            work, copied = self._copy(manuscript, tree)
            for path, text in manuscript.supplied.items():
                rel = path.relative_to(root.parent)
                if path not in manuscript.texts:  # the copy wrote the snapshot's texts, the others' disk bytes
                    (work / rel).parent.mkdir(parents=True, exist_ok=True)
                    (work / rel).write_bytes(text_bytes(text))  # the bytes the snapshot hashed
            sources = verdicts.source_digests(copied, manuscript.supplied, root)
            key = self._cache_key(engine, sources, root)
            self.last_key = key
            if self.use_cache and (hit := self._cache_get(key, root.parent, rejected)) is not None:
                self.cache_hits += 1
                hit.cached = True
                hit.cache_rejected = len(rejected)
                hit.seconds = time.perf_counter() - started
                return hit
            refused = None if confined or self.trusted else unconfined.refusal(engine, work)
            if refused is not None:
                report = CompileReport(ok=False, engine=engine)
                message, rel_file, line, token = refused
                where = str(root.parent / rel_file) if rel_file else str(root)
                report.violations = [Violation("unconfined", where, line, token, message)]
            else:
                entry = root.name if sandboxcmd.safe_file_name(root.name) else SAFE_ROOT
                if entry != root.name:
                    (work / root.name).rename(work / entry)
                if warm_start and self.warm_starts:
                    start = self._warm_start(engine, warm.head_sources(manuscript, copied), root, rejected)
                start.bib = start.kept_bib(sources)
                if start.state is not None:
                    report = self._run_confirmed(engine, tree, work, root, entry, start, stack)
                else:
                    report = self._run(engine, work, root, JOB, entry, start)
                if report.ok and self.pdf_sink is not None and start.kind != "fallback":
                    self.pdf_sink(work / f"{JOB}.pdf", key)
                if report.ok and start.kind != "fallback" and self.warm_starts:
                    fonts = fontmap.used(engine, confined, work, JOB, record.recording(work, JOB))
                    if state := warm.capture(work, sources, start.bib, fonts):
                        warm.STORE.put(key, f"{engine}:{root}", state, self._warm_dir())
        if start.kind == "fallback":
            # the cold check itself, in a fresh sandbox with a fresh deadline
            report = self._compile(manuscript, warm_start=False)
            report.start = "fallback"
            report.cache_rejected += len(rejected)
            return report
        report.seconds = time.perf_counter() - started
        report.cache_rejected = len(rejected)
        self.cache_rejected += len(rejected)
        self.compiles += 1
        if self.use_cache and not report.timed_out and not report.limit:
            self._cache_put(key, report, root.parent)
        return report

    def _run_confirmed(
        self, engine: str, tree: Path, work: Path, root: Path, entry: str, start: warm.Start, stack: ExitStack
    ) -> CompileReport:
        """Return the report of a warm start, confirmed by a cold first run beside it (gates.confirm); on any
        disagreement `start.kind` is "fallback" and the caller compiles again cold."""
        other = stack.enter_context(sandbox.job_directory())
        linked = confirm.link_tree(tree, other)  # before the seed: the cold run's job directory holds no state
        assert start.state is not None
        start.seeded = warm.seed(work, start.state)
        linked.seal()
        if cut := fontmap.bind(self._fonts, start.state.fonts, self._texts, stack):  # the map of HEAD's fonts
            self._fonts, self.maps_cut = cut, self.maps_cut + 1
            start.font_rule = fontmap.rule(start.state.fonts, self._texts)
        fonts = stack.enter_context(fontcache.job_fonts(not self.trusted and sandboxcmd.available()))
        if cut is not None and fonts is not None:  # the confirmation reads the same cut map, under the same rules
            fonts = replace(fonts, map_over=cut.map_over)
        cold_work = other / work.relative_to(tree)
        rule = start.font_rule if fonts is not None and fonts.map_over is not None else None
        check = confirm.Confirmation(lambda cancel: self._first_run(engine, cold_work, entry, fonts, cancel, rule),
                                     parallel=confirm.cores() > 1)  # fmt: skip
        try:
            report = self._run(engine, work, root, JOB, entry, start)
        except BaseException:
            check.cancel()
            raise
        if start.kind == "fallback":
            check.cancel()  # the compile starts again cold: the answer is not needed
            return report
        self.confirmations += 1
        cold_first = check.result()
        self.maps_void += cold_first.stopped == confirm.MAP_VOID
        if not confirm.agrees(start.first_errors, cold_first, linked):
            start.kind = "fallback"  # warm = cold: the cold check decides from scratch
            self.confirmations_failed += 1
        return report

    def _first_run(
        self, engine: str, work: Path, entry: str, fonts: sandboxcmd.FontDirs | None, cancel: threading.Event,
        font_rule: fontmap.Rule | None = None,
    ) -> confirm.FirstRun:  # fmt: skip
        """Return how a cold check's first run ends on `work` (no kept auxiliary files): run from another thread.
        With `font_rule` the run reads the cut font map and is void unless `fontmap.faithful` (gates.confirm)."""
        log = work / f"{JOB}.log"
        deadline = time.monotonic() + self.timeout
        options = _engine_options(JOB) + ([fontmap.MKTEX_OFF] if font_rule is not None else [])
        outcome, stopped = self._tool(engine, options, [entry], work, deadline, log, fonts, cancel)
        return confirm.FirstRun(stopped) if stopped else confirm.judged(work, JOB, entry, outcome.stderr, font_rule)

    def _copy(self, manuscript: Manuscript, tree: Path) -> tuple[Path, dict[str, bytes]]:
        """Copy the manuscript into `tree`; return (its directory there, {relpath: sha256}).

        A paper that names anything above its directory (`../figures/`) gets its repository mirrored
        (minus dot-files; see gates.mirror), else only its own directory is copied.
        The snapshot's texts are written from the snapshot (the checked bytes are the compiled bytes).
        """
        boundary = manuscript.boundary or self.boundary(manuscript.root)
        work, copied, self.mirrored = mirror.copy_for_compile(manuscript, tree, boundary, JOB)
        return work, copied

    def _run(self, engine: str, work: Path, root: Path, job: str, entry: str, start: warm.Start) -> CompileReport:
        """Run engine, bibliography tool and engine again until the auxiliary files settle (as latexmk does).

        `entry` is the root's file name inside `work` (a safe name, see `SAFE_ROOT`); `start.bib` is what the
        bibliography tool last read (its .aux lines or the .bcf): None on a cold start, else the kept state's.
        """
        deadline = time.monotonic() + self.timeout
        report = CompileReport(ok=False, engine=engine, start=start.kind)
        settled = self._settle(report, work, job, entry, start, deadline)
        if settled is None:
            return report  # the first warm run showed the kept state: the caller starts again cold
        messages, recorded, asked = settled
        if start.seeded and (report.unsettled or report.timed_out or report.limit):
            start.kind = "fallback"  # a cold check's cap and deadline count from an empty state
        record.fill(report, work, root.name, job, entry, recorded, asked, messages, self.resolve)
        report.messages = [relocate(m, work, root.parent, {entry: root.name, JOB: root.name}, JOB) for m in messages]
        making_fonts = report.timed_out and self._fonts is not None and fontcache.running(self._fonts.var)
        report.violations = located_violations(report, root, self.timeout, self.max_runs, making_fonts, self._texts)
        if report.limit:
            elapsed = time.monotonic() - deadline + self.timeout
            message = outcomes.limit_message(report.limit, self.limits, elapsed)
            report.violations = [Violation("sandbox_limit", str(root), 0, report.limit, message)]
        report.ok = not failing(report.violations)
        if report.ok and self.extract_text:
            # the sandbox is temporary: read it now, in a child process bounded by the gate's own timeout
            found = read_pdf(work / f"{job}.pdf", seconds=min(self.timeout, PDF_SECONDS))
            report.pdf_text, report.pdf_note = found.text, found.note
        return report

    def _settle(
        self, report: CompileReport, work: Path, job: str, entry: str, start: warm.Start, deadline: float
    ) -> tuple[list[LogMessage], Recording, tuple[str | None, str | None] | None] | None:
        """Run the loop of `_run`; return the last run's messages, its record and the bibliography tool it asked
        for (None when not read), or None when a warm start has to start again cold (`start.kind` says so)."""
        options = _engine_options(job) + ([fontmap.MKTEX_OFF] if start.font_rule is not None else [])
        messages: list[LogMessage] = []
        recorded = Recording()
        asked: tuple[str | None, str | None] | None = None  # the tool and its input after the last run, once read
        # each state of the auxiliary files is hashed once: after a run (or the bibliography tool) it is the next
        # run's `before`
        before = aux_state(work) if self.resolve else {}  # one pass reads nothing back
        while True:
            asked = None
            if not self._call(report.engine, options, [entry], work, deadline, work / f"{job}.log"):
                self._stopped(report)
                break
            report.runs += 1
            report.exit_code = self._outcome.returncode if self._outcome is not None else None
            log = read_log(work / f"{job}.log")
            recorded = record.recording(work, job)
            messages = parse_tex_log(log, entry, lambda f: (work / f).is_file() or Path(f).is_file(), recorded.inputs)
            messages += terminal_errors(self._outcome.stderr if self._outcome else "", log, entry, recorded.inputs)
            messages += texlog.unfinished_document(recorded, job, entry, messages)
            if start.font_rule is not None and not fontmap.faithful(recorded, log, start.font_rule):
                self.maps_void += 1
                start.kind = "fallback"  # a font HEAD did not use: the cut map may have changed the run
                return None
            if start.seeded and report.runs == 1 and start.shows_state(messages, work):
                start.kind = "fallback"
                return None
            if not self.resolve:
                break  # one pass: the paper's stress harness judges the first run only
            tool, wanted = asked = bib_tool_input(work, job)
            # a document of only \nocite{*} and \printbibliography has no pages until the tool has run
            bib_pending = tool is not None and wanted != start.bib
            stops = failed(messages, allow_no_output=bib_pending)
            if report.runs == 1:
                start.first_errors = confirm.errors(messages) if stops else []
            if stops:
                break  # the verdict cannot change: a later run stops at the same error
            after = aux_state(work)
            rerun = needs_rerun(log) or settling(before, after, log)
            if bib_pending and tool is not None:
                start.bib = wanted
                bbl_before = after
                if not self._call(tool, [], [job], work, deadline, work / f"{job}.blg"):
                    self._stopped(report)
                    break
                bib_errors = [m for m in parse_blg(read_log(work / f"{job}.blg")) if m.severity == ERROR]
                if bib_errors:
                    messages = messages + bib_errors
                    break
                after = aux_state(work)
                rerun = rerun or after != bbl_before
            before = after
            if not rerun:
                break
            if report.runs >= self.max_runs:
                report.unsettled = True
                break
            if start.seeded:
                report.start = start.kind = "warm+"
        return messages, recorded, asked

    def _stopped(self, report: CompileReport) -> None:
        if self._stop == "timeout":
            report.timed_out = True
        else:
            report.limit = self._stop

    def _call(
        self, tool: str, options: list[str], operands: list[str], work: Path, deadline: float, log: Path | None = None
    ) -> bool:
        """Run one tool in the sandbox on the job directory holding `work`. Return False on timeout or a limit.

        Raise EnvironmentFault when the machine stopped it (gates.outcomes)."""
        self._outcome, self._stop = self._tool(tool, options, operands, work, deadline, log, self._fonts)
        return not self._stop

    def _tool(
        self, tool: str, options: list[str], operands: list[str], work: Path, deadline: float, log: Path | None,
        fonts: sandboxcmd.FontDirs | None, cancel: threading.Event | None = None,
    ) -> tuple[sandbox.Outcome, str]:  # fmt: skip
        """`outcomes.run_tool` with the gate's limits and confinement (touches no state of the gate: the confirmation
        runs it from another thread)."""
        confined = not self.trusted and sandboxcmd.available()
        return outcomes.run_tool(tool, options, operands, work, deadline, log, fonts, self.limits, confined, cancel)

    def _warm_start(self, engine: str, copied: dict[str, bytes], root: Path, rejected: list[str]) -> warm.Start:
        """Return a start from the state kept for HEAD (the files on disk), else for the latest compile of `root`."""
        head = self._cache_key(engine, copied, root)
        state = warm.STORE.get(head, f"{engine}:{root}", self._warm_dir(), rejected)
        return warm.Start(state, kind="warm" if state else "cold")

    def _warm_dir(self) -> Path | None:
        return self.cache_dir / "warm" if self.use_cache and self.cache_dir is not None else None

    # -- the verdict cache ---------------------------------------------------------------
    def _cache_key(self, engine: str, sources: dict[str, bytes], root: Path) -> str:
        confined = not self.trusted and sandboxcmd.available()
        options = [engine, root.name, str(self.max_runs), str(self.resolve), str(self.timeout),
                   str(self.extract_text), str(self.trusted), str(confined)]  # fmt: skip
        return verdicts.cache_key(options, sources)

    def _cache_get(self, key: str, base: Path, rejected: list[str]) -> CompileReport | None:
        return verdicts.load_report(self.cache_dir, key, base, rejected) if self.cache_dir is not None else None

    def _cache_put(self, key: str, report: CompileReport, base: Path) -> None:
        if self.cache_dir is not None:
            verdicts.store(self.cache_dir, key, {**report.to_json(), "cache_rejected": 0}, base)


def _engine_options(job: str) -> list[str]:
    return ["-interaction=nonstopmode", "-file-line-error", "-no-shell-escape", "-recorder", f"-jobname={job}"]
