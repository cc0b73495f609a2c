"""The plugin's options and its per-session settings (in the config stash), read by items, fixtures and `fault_case`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..errors import InputError
from ..files import envfaults
from ..files.inputs import parse_seconds
from ..files.tempfiles import make_owned_temp_dir
from ..flows.check import CheckOptions
from ..gates.cachetrust import inside_work_tree
from ..gates.evidence import EvidenceReport, evaluate, record_adds
from ..gates.verdicts import default_cache_dir
from ..model import PatchwriteWarning
from ..snapshot import snapshot
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
        choices=("pdflatex", "xelatex", "lualatex"),
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
        choices=("head", "base"),
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
    parser.addini("patchwrite_collect", "collect root .tex manuscripts as test items", type="bool", default=True)
    parser.addini("patchwrite_bib", "bibliographies every manuscript may cite from", type="paths", default=[])
    parser.addini("patchwrite_log", "experimental logs that attest numbers (globs allowed)", type="paths", default=[])
    parser.addini("patchwrite_engine", "default engine when a manuscript names none", default="pdflatex")
    parser.addini("patchwrite_numbers", "number policy: decimals, all, strict or off", default="decimals")
    parser.addini("patchwrite_allow", "numbers allowed without a log", type="args", default=[])
    parser.addini("patchwrite_timeout", "seconds before a compile is killed", default="60")
    parser.addini("patchwrite_strict", "every warning fails its item", type="bool", default=False)
    parser.addini(
        "patchwrite_trusted_input",
        "the manuscripts' authors are trusted: no OS sandbox, reads not confined to the manuscript's tree",
        type="bool",
        default=False,
    )
    parser.addini("patchwrite_max_runs", "most engine runs per compile (reruns until the .aux settles)", default="5")
    parser.addini("patchwrite_base", "git revision the `diff` item compares against", default="")
    parser.addini("patchwrite_evidence_from", "diff item: whose logs and bibs attest, head or base", default="head")
    parser.addini("patchwrite_max_hunk", "fail `diff` hunks longer than this many lines (off when empty)", default="")
    parser.addini("patchwrite_max_span", "longest EDIT span the try_patch fixture accepts", default="40")
    parser.addini(
        "patchwrite_cache_dir",
        "verdict cache and warm states (default $XDG_CACHE_HOME/patchwrite/compile; refused inside the work tree)",
        type="paths",
        default=[],
    )


def from_config(config: pytest.Config) -> Settings:
    """Return the session's settings: ini values, then command-line options; a bad value is a usage error."""
    policy = str(config.getini("patchwrite_numbers")).strip().lower()
    if policy not in ("decimals", "all", "strict", "off"):
        raise pytest.UsageError(f"patchwrite_numbers = {policy!r}: use decimals, all, strict or off")
    default_engine = str(config.getini("patchwrite_engine")).strip() or "pdflatex"
    if default_engine not in ("pdflatex", "xelatex", "lualatex"):
        raise pytest.UsageError(f"patchwrite_engine = {default_engine!r}: use pdflatex, xelatex or lualatex")
    try:
        option = config.option.patchwrite_timeout
        timeout = parse_seconds(option if option is not None else str(config.getini("patchwrite_timeout")))
    except InputError as exc:
        raise pytest.UsageError(f"--patchwrite-timeout / patchwrite_timeout: {exc.problem}") from None
    try:
        max_span = int(config.getini("patchwrite_max_span"))
        max_runs = config.option.patchwrite_max_runs or int(config.getini("patchwrite_max_runs"))
        hunk = str(config.getini("patchwrite_max_hunk")).strip()
        max_hunk = int(hunk) if hunk else None
    except ValueError as exc:
        raise pytest.UsageError(
            f"patchwrite_timeout / patchwrite_max_span / patchwrite_max_runs / patchwrite_max_hunk: {exc}"
        ) from exc
    if max_runs < 1:
        raise pytest.UsageError(f"patchwrite_max_runs = {max_runs}: at least one engine run is needed")
    base = config.option.patchwrite_base or str(config.getini("patchwrite_base")).strip() or None
    evidence_from = config.option.patchwrite_evidence_from or str(config.getini("patchwrite_evidence_from"))
    if evidence_from.strip().lower() not in ("head", "base"):
        raise pytest.UsageError(f"patchwrite_evidence_from = {evidence_from!r}: use head or base")
    # never pytest's cache under the rootdir: a pull request could commit entries there (gates.cachetrust)
    configured = [Path(p) for p in config.getini("patchwrite_cache_dir")]
    cache_dir = configured[0] if configured else None
    if cache_dir is not None and inside_work_tree(cache_dir, Path(config.rootpath) / "x", Path(config.rootpath)):
        config.issue_config_time_warning(
            PatchwriteWarning(f"patchwrite_cache_dir = {cache_dir} lies inside the work tree being checked; the "
                              f"user cache directory {default_cache_dir()} is used instead"),
            stacklevel=2,
        )  # fmt: skip
        cache_dir = None
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and SHARED_DIR_KEY in workerinput:
        shared, owns = Path(workerinput[SHARED_DIR_KEY]), False
    else:
        try:
            shared, owns = make_owned_temp_dir("session"), True
        except OSError as exc:  # a full or read-only TMPDIR: say where, not INTERNALERROR
            fault = envfaults.from_oserror(exc, "making the session's directory")
            raise pytest.UsageError(f"patchwrite: {fault or exc}") from None
    options = CheckOptions(
        engine=config.option.patchwrite_engine,
        default_engine=default_engine,
        timeout=timeout,
        max_runs=max_runs,
        warnings_fail=bool(config.option.patchwrite_strict or config.getini("patchwrite_strict")),
        use_cache=not config.option.patchwrite_no_cache,
        cache_dir=cache_dir,
        bibs=[Path(p) for p in config.getini("patchwrite_bib")],
        logs=[Path(p) for p in config.getini("patchwrite_log")],
        numbers="decimals" if policy == "strict" else policy,
        strict=policy == "strict",
        allow_numbers=list(config.getini("patchwrite_allow")),
        trusted=bool(config.option.patchwrite_trusted_input or config.getini("patchwrite_trusted_input")),
        rootdir=Path(config.rootpath),
    )
    report = Path(config.option.patchwrite_report) if config.option.patchwrite_report else None
    return Settings(
        options=options,
        collect=bool(config.getini("patchwrite_collect")),
        max_span=max_span,
        report=report,
        shared_dir=shared,
        owns_shared_dir=owns,
        base=base,
        max_hunk=max_hunk,
        annotations=bool(config.option.patchwrite_annotations),
        evidence_from=evidence_from.strip().lower(),
    )
