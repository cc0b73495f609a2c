"""pytest fixtures `citation_f1`, `sxs`, `litreview`, the judge options and the `quality` item's configuration."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..files.inputs import read_json

if TYPE_CHECKING:
    from ..autoraters.citation_metrics import CitationF1
    from ..autoraters.judges import Judge, SxSResult
    from ..autoraters.litreview import LitReviewReport

JUDGE_KEY = pytest.StashKey["Judge | None"]()
DEFAULT_AVG_CITATIONS = "59.18"  # ICLR 2025, as PaperOrchestra reports it


def add_options(parser: pytest.Parser) -> None:
    """Register the judge options."""
    group = parser.getgroup("patchwrite")
    group.addoption("--patchwrite-judge", dest="patchwrite_judge", default=None, metavar="SPEC",
                    help="judge for the sxs/litreview fixtures and the quality item: local, openai:MODEL@URL or "
                    "openai:MODEL")  # fmt: skip
    parser.addini("patchwrite_judge", "judge SPEC (local, openai:MODEL@URL, openai:MODEL)", default="")
    parser.addini("patchwrite_avg_citations", "the venue's average number of cited works (literature review)",
                  default=DEFAULT_AVG_CITATIONS)  # fmt: skip


def judge_spec(config: pytest.Config) -> str | None:
    """Return the configured judge SPEC (command line, then ini), or None."""
    return config.option.patchwrite_judge or str(config.getini("patchwrite_judge")).strip() or None


def avg_citations(config: pytest.Config) -> float:
    """Return the configured venue average; raise UsageError when it is not a positive number."""
    value = str(config.getini("patchwrite_avg_citations")).strip()
    try:
        avg = float(value)
    except ValueError:
        avg = -1.0
    if avg <= 0:
        raise pytest.UsageError(f"patchwrite_avg_citations = {value!r}: give the venue's average number of citations")
    return avg


def session_judge(config: pytest.Config) -> Judge | None:
    """Return the session's judge (made once, replies cached in the user's sealed reply cache), or None."""
    if JUDGE_KEY not in config.stash:
        spec = judge_spec(config)
        judge = None
        if spec:
            from ..autoraters.cache import default_dir
            from ..autoraters.judges import make_judge
            from ..errors import InputError

            try:
                judge = make_judge(spec, default_dir())
            except InputError as exc:
                raise pytest.UsageError(f"patchwrite judge: {exc}") from None
        config.stash[JUDGE_KEY] = judge
    return config.stash[JUDGE_KEY]


def _source(target: Any) -> str | Path:
    """Return a path for a ManuscriptCopy, a fault case or a path; text stays text."""
    if isinstance(target, str) and ("\\" in target or "\n" in target):
        return target
    return Path(getattr(target, "path", target))


def _require_judge(request: pytest.FixtureRequest) -> Judge:
    judge = session_judge(request.config)
    if judge is None:
        pytest.skip("no judge configured: set patchwrite_judge in the ini file or pass --patchwrite-judge SPEC")
    return judge


@pytest.fixture
def citation_f1(request: pytest.FixtureRequest) -> Callable[..., CitationF1]:
    """Return `citation_f1(gt, gen, gt_partition=None, gen_partition=None, mode="skill")` over two manuscripts."""
    from ..autoraters.citation_metrics import citation_f1 as compute
    from ..autoraters.citation_metrics import parse_partition
    from ..autoraters.references import load_references

    def partition(value: Any, refs: Any, name: str) -> Any:
        if value is None or isinstance(value, dict) and all(isinstance(k, int) for k in value):
            return value
        data = value if isinstance(value, dict) else read_json(Path(value))
        return parse_partition(data, refs.references, name)

    def run(gt: Any, gen: Any, gt_partition: Any = None, gen_partition: Any = None, mode: str = "skill") -> CitationF1:
        gt_refs, gen_refs = load_references(Path(_source(gt))), load_references(Path(_source(gen)))
        return compute(gt_refs.references, gen_refs.references, partition(gt_partition, gt_refs, "gt_partition"),
                       partition(gen_partition, gen_refs, "gen_partition"), mode)  # fmt: skip

    return run


@pytest.fixture
def sxs(request: pytest.FixtureRequest) -> Callable[..., SxSResult]:
    """Return `sxs(a, b, aspect="paper")`: A against B judged twice, order swapped; `.outcome` is A's."""
    from ..autoraters.judges import run_sxs

    def run(a: Any, b: Any, aspect: str = "paper") -> SxSResult:
        return run_sxs(_require_judge(request), _source(a), _source(b), aspect)

    return run


@pytest.fixture
def litreview(request: pytest.FixtureRequest) -> Callable[..., LitReviewReport]:
    """Return `litreview(paper, score=None, avg_citations=None)`: the judge's (or a given) score, validated."""
    from ..autoraters.judges import score_litreview
    from ..autoraters.litreview import validate
    from ..autoraters.references import load_references

    def run(paper: Any, score: Any = None, avg_citations_: float | None = None) -> LitReviewReport:
        path = Path(_source(paper))
        avg = avg_citations_ or avg_citations(request.config)
        count = load_references(path).unique_works()
        call = None
        if score is None:
            call = score_litreview(_require_judge(request), path, count, avg)
            score = call.data
        elif not isinstance(score, dict):
            score = read_json(Path(score))
        report = validate(score, count, avg)
        report.call = call.to_json() if call else None
        return report

    return run


def quality_verdict(config: pytest.Config, root: Path, base: str) -> Any:
    """Return the `quality` item's GateResult for `root` against `base` (None: the base lacks this manuscript)."""
    from ..autoraters.quality import quality_result

    judge = session_judge(config)
    assert judge is not None
    return quality_result(root, base, judge, avg_citations(config))
