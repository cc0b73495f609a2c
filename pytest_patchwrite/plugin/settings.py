"""The plugin's options and its per-session settings (in the config stash), read by items, fixtures and `fault_case`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..errors import InputError
from ..files import envfaults
from ..files.tempfiles import make_owned_temp_dir
from ..flows.check import CheckOptions
from ..flows.schema import SETTINGS as SCHEMA
from ..flows.schema import resolve
from ..flows.selfattest import EVIDENCE_FROM
from ..gates.evidence import EvidenceReport, evaluate, record_adds
from ..gates.verdicts import default_cache_dir
from ..model import PatchwriteWarning
from ..snapshot import snapshot
from ..snapshot.engines import ENGINES
from ..snapshot.manuscript import Manuscript, load_manuscript


@dataclass
class Settings:
    """The plugin's configuration, resolved once per session (ini, then command line)."""

    options: CheckOptions
    collect: bool
    max_span: int
    report: Path | None
    shared_dir: Path
    base: str | None
    max_hunk: int | None
    annotations: bool
    owns_shared_dir: bool
    extra_gates: list[Any] = field(default_factory=list)
    evidence: dict[Path, EvidenceReport] = field(default_factory=dict)
    evidence_from: str = "head"  # which revision's logs and bibs attest in the diff item (selfattest)
    manuscripts: dict[Path, Manuscript] = field(default_factory=dict)
    recorded: set[Path] = field(default_factory=set)  # roots whose evidence took the engine's record

    def manuscript_of(self, root: Path) -> Manuscript:
        """Return the snapshot of the manuscript at `root`, read once per session and process (every item takes it)."""
        if root not in self.manuscripts:
            self.manuscripts[root] = load_manuscript(root, boundary=self.options.evidence_config().boundary(root))
        return self.manuscripts[root]

    def evidence_of(self, root: Path, compiled: Any = None) -> EvidenceReport:
        """Return the evidence locks' report on `root`, evaluated once per session and process; with the session's
        compile report (`compiled`), once more with the engine's record when it adds anything (`record_adds`)."""
        if root not in self.evidence:
            self.evidence[root] = evaluate(self.manuscript_of(root), self.options.evidence_config())
        if compiled is not None and root not in self.recorded:
            self.recorded.add(root)
            manuscript = self.manuscript_of(root)
            if manuscript.record is None:  # compiled by another worker: its report, this process's snapshot
                snapshot.take_record(manuscript, compiled)
            if record_adds(manuscript, self.evidence[root]):
                self.evidence[root] = evaluate(manuscript, self.options.evidence_config())
        return self.evidence[root]


SETTINGS = pytest.StashKey[Settings]()
#: the workerinput key that hands the controller's shared result directory to xdist workers
SHARED_DIR_KEY = "patchwrite_shared_dir"


def add_options(parser: pytest.Parser) -> None:
    """Declare the plugin's own command-line options (all `--patchwrite-*`) and ini settings."""
    group = parser.getgroup("patchwrite", "LaTeX manuscripts (pytest-patchwrite)")
    group.addoption(
        "--patchwrite-engine",
        dest="patchwrite_engine",
        default=None,
        choices=ENGINES,
        help="force this TeX engine for every manuscript",
    )
    group.addoption(
        "--patchwrite-no-cache",
        dest="patchwrite_no_cache",
        action="store_true",
        default=False,
        help="compile even when a verdict for the same bytes is cached",
    )
    group.addoption(
        "--patchwrite-report",
        dest="patchwrite_report",
        default=None,
        metavar="FILE",
        help="write every manuscript's verdicts as JSON (the `patchwrite check --json` shape)",
    )
    group.addoption(
        "--patchwrite-base",
        dest="patchwrite_base",
        default=None,
        metavar="REV",
        help="add a `diff` item per manuscript: what the change moved against this git revision",
    )
    group.addoption(
        "--patchwrite-evidence-from",
        dest="patchwrite_evidence_from",
        default=None,
        choices=EVIDENCE_FROM,
        help="diff item: `head` lets the change's own log values and bib entries attest (with a warning), "
        "`base` only the base revision's (an error otherwise)",
    )
    group.addoption(
        "--patchwrite-annotations",
        dest="patchwrite_annotations",
        action="store_true",
        default=False,
        help="print GitHub Actions `::error file=...,line=...::` lines for every violation",
    )
    group.addoption(
        "--patchwrite-timeout",
        dest="patchwrite_timeout",
        default=None,
        type=float,
        metavar="S",
        help="seconds before a compile is killed (default: ini patchwrite_timeout, 60)",
    )
    group.addoption(
        "--patchwrite-strict",
        dest="patchwrite_strict",
        action="store_true",
        default=False,
        help="every warning (a repeated bib entry, a key differing only in case under bibtex) fails its item",
    )
    group.addoption(
        "--patchwrite-trusted-input",
        dest="patchwrite_trusted_input",
        action="store_true",
        default=False,
        help="the manuscripts' authors are trusted: run TeX without the OS sandbox and read files outside their tree",
    )
    group.addoption(
        "--patchwrite-max-runs",
        dest="patchwrite_max_runs",
        default=None,
        type=int,
        metavar="N",
        help="most engine runs per compile before `rerun_limit` (default: ini patchwrite_max_runs, 5)",
    )
    group.addoption(
        "--patchwrite-summary",
        dest="patchwrite_summary",
        default=None,
        metavar="FILE",
        help="write a Markdown summary of every manuscript's items and violations (default: $GITHUB_STEP_SUMMARY)",
    )
    group.addoption(
        "--patchwrite-sarif",
        dest="patchwrite_sarif",
        default=None,
        metavar="FILE",
        help="write every violation to FILE as SARIF 2.1.0 (for GitHub code scanning)",
    )
    group.addoption(
        "--patchwrite-pages",
        dest="patchwrite_pages",
        default=None,
        metavar="DIR",
        help="with a base: draw the pages each change altered, before and after, into DIR (DIR/index.html)",
    )
    group.addoption(
        "--patchwrite-bind",
        dest="patchwrite_bind",
        action="store_true",
        default=False,
        help="rewrite each manuscript's bindings file (<root>.bindings.json) before the run, as "
        "`patchwrite bind --update` does",
    )
    for setting in SCHEMA:
        parser.addini(setting.name, setting.help, type=setting.type, default=setting.default)  # type: ignore[arg-type]


#: command-line options that stand over the ini setting of the same name when given
OVERRIDES = ("patchwrite_timeout", "patchwrite_max_runs", "patchwrite_base", "patchwrite_evidence_from")
#: command-line flags that turn on the ini setting of the same name
FLAGS = ("patchwrite_strict", "patchwrite_trusted_input")


def from_config(config: pytest.Config) -> Settings:
    """Return the session's settings: ini values, then command-line options (the one schema, `flows.schema`); a bad
    value is a usage error."""

    def get(name: str) -> Any:
        option = getattr(config.option, name, None) if name in OVERRIDES + FLAGS else None
        # by identity: a given 0 (`--patchwrite-timeout=0`) equals False, and must reach the check, not the ini
        return config.getini(name) if option is None or option is False else option

    rootdir = Path(config.rootpath)
    try:
        resolved = resolve(get, rootdir, rootdir)
    except InputError as exc:
        raise pytest.UsageError(exc.problem) from None
    if resolved.cache_refused is not None:  # never a cache a pull request could commit to (gates.cachetrust)
        config.issue_config_time_warning(
            PatchwriteWarning(f"patchwrite_cache_dir = {resolved.cache_refused} lies inside the work tree being "
                              f"checked; the user cache directory {default_cache_dir()} is used instead"),
            stacklevel=2,
        )  # fmt: skip
    options = resolved.options
    options.engine = config.option.patchwrite_engine
    options.use_cache = not config.option.patchwrite_no_cache
    shared, owns = _shared_dir(config)
    report = Path(config.option.patchwrite_report) if config.option.patchwrite_report else None
    return Settings(
        options=options,
        collect=resolved.collect,
        max_span=resolved.max_span,
        report=report,
        shared_dir=shared,
        owns_shared_dir=owns,
        base=resolved.base,
        max_hunk=resolved.max_hunk,
        annotations=bool(config.option.patchwrite_annotations),
        evidence_from=resolved.evidence_from,
    )


def _shared_dir(config: pytest.Config) -> tuple[Path, bool]:
    """Return the session's shared result directory and whether this process made it (else an xdist worker's)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and SHARED_DIR_KEY in workerinput:
        return Path(workerinput[SHARED_DIR_KEY]), False
    try:
        return make_owned_temp_dir("session"), True
    except OSError as exc:  # a full or read-only TMPDIR: say where, not INTERNALERROR
        fault = envfaults.from_oserror(exc, "making the session's directory")
        raise pytest.UsageError(f"patchwrite: {fault or exc}") from None
