"""The pytest plugin: root manuscripts become test items, one per gate."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

from .. import shown
from ..commands import sarif
from ..errors import InputError, NotRegularFile, PatchwriteError
from ..files.inputs import read_text
from ..flows.check import citations_result, compile_result, numbers_result, placeholders_result
from ..flows.prdiff import GitBase, changed_lines, diff_working_tree, format_change
from ..gates.evidence import NO_LOG as NO_LOG_DECLARED
from ..gates.report import CompileReport, EngineMissing
from ..model import WARNING, GateResult, PatchContext, PatchwriteWarning, Violation, display_path, printed_lines
from ..snapshot.roots import peek_text
from ..tex.texinputs import is_root
from . import hookspecs, stepsummary
from .bindsession import BOUND
from .envreport import is_environment_error, pytest_report_teststatus, pytest_runtest_makereport
from .faultcase import add_options as add_fault_options
from .faultcase import fault_case
from .faultcase import generate as generate_fault_cases
from .fixtures import assert_head_invariant, assert_preserved, manuscript, pytest_assertrepr_compare, try_patch
from .proposing import add_options as add_proposer_options
from .proposing import configure as configure_proposer
from .proposing import propose
from .ratefixtures import add_options as add_judge_options
from .ratefixtures import citation_f1, judge_spec, litreview, quality_verdict, sxs
from .settings import SETTINGS, SHARED_DIR_KEY, Settings, add_options, from_config

__all__ = [
    "pytest_report_teststatus",
    "pytest_runtest_makereport",
    "assert_head_invariant",
    "assert_preserved",
    "citation_f1",
    "litreview",
    "sxs",
    "fault_case",
    "manuscript",
    "propose",
    "pytest_assertrepr_compare",
    "try_patch",
]

ITEMS = ("compile", "citations", "numbers", "placeholders")
NO_LOG = f"{NO_LOG_DECLARED}: set patchwrite_log or add % !patchwrite log = ... to the manuscript"
#: resolved paths of the manuscripts collected so far: a symlinked directory loop collects each once
COLLECTED = pytest.StashKey[set[Path]]()
#: the item standing for a manuscript that cannot be read
READ_ITEM = "read"


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)
    add_fault_options(parser)
    add_proposer_options(parser)
    add_judge_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "patchwrite: a check of a LaTeX manuscript by pytest-patchwrite")
    settings = from_config(config)
    gates = config.pluginmanager.hook.pytest_patchwrite_gates(config=config)
    settings.extra_gates = [gate for batch in gates if batch for gate in batch]
    config.stash[SETTINGS] = settings
    config.pluginmanager.register(Recorder(config), "patchwrite-recorder")
    configure_proposer(config)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(), "patchwrite-xdist")


class _XdistHooks:
    """Hands the shared result directory to every xdist worker (the pytest-mypy pattern)."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[SHARED_DIR_KEY] = str(node.config.stash[SETTINGS].shared_dir)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    # before xdist starts its workers: the controller (or the only process) binds, once
    if session.config.option.patchwrite_bind and not hasattr(session.config, "workerinput"):
        from .bindsession import bind_session

        bind_session(session.config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "fault_case" in metafunc.fixturenames:
        generate_fault_cases(metafunc)


def pytest_unconfigure(config: pytest.Config) -> None:
    settings = config.stash.get(SETTINGS, None)
    if settings is not None and settings.owns_shared_dir:
        shutil.rmtree(settings.shared_dir, ignore_errors=True)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ManuscriptFile | None:
    settings = parent.config.stash[SETTINGS]
    if file_path.suffix != ".tex" or not settings.collect:
        return None
    try:
        real = file_path.resolve()
    except (OSError, RuntimeError):  # a symlink loop in the file's own path
        return None
    collected = parent.config.stash.setdefault(COLLECTED, set())
    if real in collected:
        return None
    try:
        # a bounded peek that never blocks: a FIFO or device named *.tex is no manuscript
        head = peek_text(file_path)
    except NotRegularFile:
        return None
    except InputError:
        collected.add(real)
        return _manuscript_file(parent, file_path)  # unreadable: its `read` item says why
    if not is_root(head):
        return None
    collected.add(real)
    return _manuscript_file(parent, file_path)


def _manuscript_file(parent: pytest.Collector, file_path: Path) -> ManuscriptFile:
    """Return the collector of a root manuscript, its node id escaped when the path holds control characters.

    pytest prints node ids raw (the failure header, the FAILED summary): a file name with a newline
    followed by `::stop-commands::TOKEN` would be a GitHub workflow command of the pull request's.
    """
    try:
        relative = file_path.relative_to(parent.config.rootpath).as_posix()
    except ValueError:
        relative = file_path.as_posix()
    if shown.text(relative) == relative:
        return ManuscriptFile.from_parent(parent, path=file_path)
    return ManuscriptFile.from_parent(parent, path=file_path, nodeid=shown.line(relative))


def shared_compile(settings: Settings, root: Path) -> tuple[CompileReport, bool]:
    """Return the session's one compile of `root` and whether this call performed it (also across xdist workers)."""
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:20]
    result = settings.shared_dir / f"{key}.json"
    with open(settings.shared_dir / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.exists():
            return CompileReport.from_json(json.loads(result.read_text())), False
        gate = settings.options.compile_gate(root)
        gate.extract_text = _has_placeholders(settings, root)
        report = gate.compile(settings.manuscript_of(root))  # the snapshot the evidence items read
        result.write_text(json.dumps(report.to_json()))
        return report, True


def _has_placeholders(settings: Settings, root: Path) -> bool:
    """Return whether the source holds placeholder candidates, which the compile's PDF text then confirms."""
    try:
        return bool(settings.evidence_of(root).placeholders)
    except InputError:
        return False  # the lock items report it


class ManuscriptFailure(Exception):
    """A gate found violations; shown as `relpath:line: kind token message` lines."""

    def __init__(
        self, violations: list[Violation], notes: list[str] | None = None, changed: set[tuple[str, int]] | None = None
    ) -> None:
        super().__init__(f"{len(violations)} violation(s)")
        self.violations = violations
        self.notes = notes or []
        self.changed = changed or set()  # (file, line) pairs the change against --patchwrite-base touched


class ManuscriptFile(pytest.File):
    """A root manuscript: one item per gate."""

    read_error: PatchwriteError | None = None

    def collect(self) -> list[ManuscriptItem]:
        try:
            read_text(self.path)
        except PatchwriteError as exc:
            # one failing item, not a collection error: that would interrupt the whole session
            self.read_error = exc
            return [ManuscriptItem.from_parent(self, name=READ_ITEM)]
        settings = self.config.stash[SETTINGS]
        names = [
            *ITEMS,
            *(["diff"] if settings.base else []),
            *(["quality"] if settings.base and judge_spec(self.config) else []),
            *(g.stage for g in settings.extra_gates if g.stage not in ITEMS),
        ]
        return [ManuscriptItem.from_parent(self, name=name) for name in names]


class ManuscriptItem(pytest.Item):
    """One gate's verdict on one manuscript."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker("patchwrite")

    def runtest(self) -> None:
        if self.name == READ_ITEM and isinstance(self.parent, ManuscriptFile) and self.parent.read_error:
            raise self.parent.read_error
        settings = self.config.stash[SETTINGS]
        result = self._verdict(settings)
        if settings.options.warnings_fail:
            result = result.strict()
        if result.details.get("cached"):
            result.details["performed_compile"] = False  # a verdict cache hit ran no engine
        data = {"path": str(self.path), "gate": self.name, "result": result.to_json(), "seconds": result.seconds}
        self.user_properties.append(("patchwrite", data))
        if not result.ok:
            notes = []
            if self.name == "diff":
                notes = [f"changes against {settings.base}:", *_change_lines(result, self.config)]
            notes += result.details.get("notes", []) if self.name == "quality" else []
            changed = None
            if self.name == "numbers" and settings.base:  # what the change touched comes first, before the cap
                changed = changed_lines(
                    settings.manuscript_of(self.path), GitBase.open(self.path.parent, settings.base)
                )
            raise ManuscriptFailure(result.violations, notes, changed)
        base = self.config.invocation_params.dir
        for violation in result.violations:
            if violation.severity == WARNING:
                # located at the source line, so the warnings summary links it; `-W error::...` makes it fail
                message = PatchwriteWarning(violation.format(base))
                warnings.warn_explicit(message, PatchwriteWarning, violation.file or str(self.path), violation.line)

    def _verdict(self, settings: Settings) -> GateResult:
        root = self.path
        if self.name == "compile":
            try:
                report, performed = shared_compile(settings, root)
            except EngineMissing as exc:
                pytest.skip(str(exc))
            result = compile_result(report)
            result.details["performed_compile"] = performed
            return result
        if self.name in ("citations", "placeholders"):  # both read what the compile found
            shared: CompileReport | None
            try:
                shared, performed = shared_compile(settings, root)
            except EngineMissing:
                shared, performed = None, False
            judge = citations_result if self.name == "citations" else placeholders_result
            result = judge(settings.evidence_of(root, shared), shared)
            result.details["performed_compile"] = performed and shared is not None and not shared.cached
            return result
        if self.name == "numbers":
            if numbers_result(settings.evidence_of(root)) is None:
                pytest.skip(NO_LOG)  # no log is declared: nothing the compile adds changes that, so none is waited for
            try:  # a file the engine typeset that the reading missed holds numbers too
                typeset: CompileReport | None = shared_compile(settings, root)[0]
            except EngineMissing:
                typeset = None
            numbers = numbers_result(settings.evidence_of(root, typeset))
            if numbers is None:
                pytest.skip(NO_LOG)
            return numbers
        if self.name == "diff":
            assert settings.base is not None
            diffed, _ = diff_working_tree(
                settings.manuscript_of(root),
                GitBase.open(root.parent, settings.base),
                settings.options.evidence_config(),
                lambda: shared_compile(settings, root)[0],  # the compile item's report
                max_hunk=settings.max_hunk,
                evidence_from=settings.evidence_from,
                evidence=lambda compiled: settings.evidence_of(root, compiled),  # the snapshot takes the record
            )
            return diffed.result()
        if self.name == "quality":
            assert settings.base is not None
            verdict = quality_verdict(self.config, root, settings.base)
            if verdict is None:
                pytest.skip(f"new in this change (not in {settings.base}): nothing to judge it against")
            return verdict
        gate = next(g for g in settings.extra_gates if g.stage == self.name)
        text = read_text(root)
        return gate.check(text, PatchContext(root, text))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ManuscriptFailure):
            base = self.config.invocation_params.dir
            lines = printed_lines(
                excinfo.value.violations, base, "--patchwrite-report FILE", changed=excinfo.value.changed
            )
            return "\n".join([*lines, *(shown.line(note) for note in excinfo.value.notes)])
        if isinstance(excinfo.value, PatchwriteError):
            return f"patchwrite: {excinfo.value.format(self.config.invocation_params.dir)}"
        if isinstance(excinfo.value, PatchwriteWarning):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return shown.text(self.path), None, shown.line(f"[patchwrite] {self.path.name}::{self.name}")


def _change_lines(result: GateResult | dict[str, Any], config: pytest.Config) -> list[str]:
    details = result.details if isinstance(result, GateResult) else result
    base = config.invocation_params.dir
    lines = [f"  {format_change(Violation.from_json(c), base)}" for c in details.get("changes", [])]
    lines.append(f"  numeric Jaccard {details['numeric_jaccard']:.4f}, cite Jaccard {details['cite_jaccard']:.4f}")
    if details.get("new_manuscript"):
        lines.insert(0, "  a new manuscript: every number and key counts as added")
    return lines


def _reason(report: pytest.TestReport) -> str:
    """Return a skip's reason or the first line of a failure, '' for a pass."""
    if report.passed:
        return ""
    if isinstance(report.longrepr, tuple):  # a skip: (file, line, "Skipped: reason")
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    lines = report.longreprtext.strip().splitlines()
    return lines[0] if lines else ""


class Recorder:
    """Collects every item's verdict on the controller (xdist forwards reports there) for the summary and report."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.verdicts: dict[str, dict[str, Any]] = {}
        self.outcomes: dict[str, dict[str, tuple[str, str]]] = {}  # path -> item -> (outcome, skip or error reason)
        self.summary_error = ""

    @property
    def skipped(self) -> int:
        """Return how many of the built-in items were skipped."""
        return sum(o == "skipped" for gates in self.outcomes.values() for g, (o, _) in gates.items() if g in ITEMS)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for name, data in report.user_properties:
            if name == "patchwrite" and isinstance(data, dict):
                self.verdicts.setdefault(data["path"], {})[data["gate"]] = data
        file, _, gate = report.nodeid.rpartition("::")
        if file.endswith(".tex") and "patchwrite" in report.keywords:
            path = os.path.normpath(self.config.rootpath / file)
            outcome = "error" if is_environment_error(report) else report.outcome
            self.outcomes.setdefault(path, {})[gate] = (outcome, _reason(report))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        settings = self.config.stash[SETTINGS]
        if hasattr(self.config, "workerinput"):
            return
        self._write_summary()
        if self.config.option.patchwrite_sarif:
            failed = sarif.write_session(self.config.option.patchwrite_sarif, self.verdicts, self.config)
            self.summary_error = "\n".join(line for line in (self.summary_error, failed) if line)
        if self.config.option.patchwrite_pages and settings.base:
            from .pagessession import write_session_pages

            failed = write_session_pages(Path(self.config.option.patchwrite_pages), self.verdicts, settings)
            self.summary_error = "\n".join(line for line in (self.summary_error, failed) if line)
        if settings.report is None:
            return
        manuscripts = []
        for path in sorted(self.verdicts):
            verdicts = self.verdicts[path]
            gates = {gate: data["result"] for gate, data in sorted(verdicts.items())}
            compiles = sum(1 for data in verdicts.values() if data["result"].get("performed_compile"))
            manuscripts.append({"path": path, "gates": gates, "compiles": compiles})
        settings.report.parent.mkdir(parents=True, exist_ok=True)
        settings.report.write_text(json.dumps({"manuscripts": manuscripts}, indent=2) + "\n")

    def _write_summary(self) -> None:
        where = stepsummary.destination(self.config.option.patchwrite_summary, os.environ)
        if where is None or not self.outcomes:
            return
        text = stepsummary.render(self.outcomes, self.verdicts, self.config.invocation_params.dir)
        try:
            where[0].parent.mkdir(parents=True, exist_ok=True)
            with open(where[0], where[1], encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:  # the summary is a view; failing to write it must not fail the run
            self.summary_error = f"patchwrite: could not write the Markdown summary to {where[0]}: {exc}"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary_error:
            terminalreporter.write_line(self.summary_error, yellow=True)
        for line in self.config.stash.get(BOUND, []):
            terminalreporter.write_line(f"patchwrite bind: {line}")
        if hasattr(self.config, "workerinput") or not self.verdicts:
            return
        passed: dict[str, int] = {}
        seen: dict[str, int] = {}
        seconds, hits, compiles, warned, rejected = 0.0, 0, 0, 0, 0
        for gates in self.verdicts.values():
            for gate, data in gates.items():
                seen[gate] = seen.get(gate, 0) + 1
                passed[gate] = passed.get(gate, 0) + bool(data["result"]["ok"])
                compiles += bool(data["result"].get("performed_compile"))
                warned += sum(v.get("severity") == WARNING for v in data["result"]["violations"])
                if gate == "compile":
                    seconds += float(data["result"].get("seconds", 0.0))
                    hits += bool(data["result"].get("cached"))
                    rejected += int(data["result"].get("cache_rejected", 0))
        terminalreporter.write_sep("-", "patchwrite")
        terminalreporter.write_line(f"manuscripts checked: {len(self.verdicts)}")
        parts = [f"{gate} {passed[gate]}/{seen[gate]} passed" for gate in sorted(seen)]
        skipped = f"; {self.skipped} skipped" if self.skipped else ""
        terminalreporter.write_line("; ".join(parts) + skipped)
        terminalreporter.write_line(f"compiles: {compiles} ({seconds:.2f} s); verdict cache hits: {hits}")
        if rejected:
            why = "their HMAC did not verify: planted, copied from another user's cache or tampered with"
            terminalreporter.write_line(f"cache entries rejected: {rejected} ({why}); they were ignored", yellow=True)
        settings = self.config.stash[SETTINGS]
        if warned:
            fails = "they fail" if settings.options.warnings_fail else "--patchwrite-strict makes them fail"
            terminalreporter.write_line(f"warnings: {warned} (PatchwriteWarning; {fails})")
        base_dir = self.config.invocation_params.dir
        for path, gates in sorted(self.verdicts.items()):
            if "diff" in gates:
                where = display_path(path, base_dir)
                terminalreporter.write_line(shown.line(f"{where}: changes against {settings.base}:"))
                for line in _change_lines(gates["diff"]["result"], self.config):
                    terminalreporter.write_line(line)
        if settings.annotations:
            lines = [
                stepsummary.annotation(violation, base_dir)
                for gates in self.verdicts.values()
                for data in gates.values()
                for violation in data["result"]["violations"]
            ]
            for line in dict.fromkeys(lines):  # the diff item repeats what the lock items found
                terminalreporter.write_line(line)
