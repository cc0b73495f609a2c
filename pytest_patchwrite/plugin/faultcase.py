"""The `fault_case` fixture: the paper's fault corpus (or the user's own paper) as parametrized cases."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..corpus import DOCUMENTS, FAULTS, Fault, FaultNotApplicable, inject, materialize, select
from ..edit import Edit, number_lines
from ..files import envfaults
from ..files.inputs import read_text
from ..model import Gate
from .fixtures import EvidenceTokens
from .settings import SETTINGS


@dataclass
class FaultCase:
    """A broken HEAD on disk, what is wrong with it, and the checks a repair must pass."""

    id: str
    fault: Fault
    path: Path
    gates: list[Gate] = field(default_factory=list)

    @property
    def name(self) -> str:
        """Return the fault's name (`fake_cite`, ...)."""
        return self.fault.name

    @property
    def head(self) -> str:
        """Return the pre-fault HEAD text."""
        return self.fault.head

    @property
    def broken(self) -> str:
        """Return the broken HEAD text (what is on disk before any repair)."""
        return self.fault.broken

    @property
    def note(self) -> str:
        """Return the one-line defect note: what is wrong, not the fix."""
        return self.fault.note

    @property
    def text(self) -> str:
        """Return the file's current text."""
        return read_text(self.path)

    def numbered(self) -> str:
        """Return the numbered view of the broken HEAD a proposer sees."""
        return number_lines(self.text)

    def oracle_edit(self) -> Edit:
        """Return the paper's oracle repair."""
        return self.fault.oracle_edit()

    def fixed(self, text: str | None = None) -> bool:
        """Return whether the fault is gone (strict string check) from `text` or the file."""
        return self.fault.fixed(self.text if text is None else text)

    def preserved(self, text: str | None = None) -> bool:
        """Return whether every number and cite key of the pre-fault HEAD is still there, and nothing new."""
        return EvidenceTokens(self.head) == EvidenceTokens(self.text if text is None else text)


def add_options(parser: pytest.Parser) -> None:
    """Register the options that select fault cases."""
    group = parser.getgroup("patchwrite")
    group.addoption(
        "--patchwrite-faults",
        dest="patchwrite_faults",
        default=None,
        metavar="LIST",
        help="comma-separated faults for fault_case (default: all eight)",
    )
    group.addoption(
        "--patchwrite-corpus",
        dest="patchwrite_corpus",
        default=None,
        metavar="LANG",
        help="corpus manuscripts for fault_case: en, zh or en,zh (default: all 24)",
    )
    group.addoption(
        "--patchwrite-corpus-build",
        dest="patchwrite_corpus_build",
        default="surrogate",
        choices=("surrogate", "ctex"),
        help="Chinese-venue manuscripts as pdflatex surrogates or ctexart",
    )
    parser.addini("patchwrite_fault_base", "your own manuscripts to inject the faults into, instead of the corpus",
                  type="paths", default=[])  # fmt: skip


def _faults(config: pytest.Config) -> list[str]:
    chosen = config.option.patchwrite_faults
    if not chosen:
        return list(FAULTS)
    names = [n.strip() for n in chosen.split(",") if n.strip()]
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        raise pytest.UsageError(f"--patchwrite-faults: unknown {', '.join(unknown)}; choose from {', '.join(FAULTS)}")
    return names


def generate(metafunc: pytest.Metafunc) -> None:
    """Parametrize `fault_case` over the corpus jobs, or over the user's `patchwrite_fault_base` manuscripts."""
    config = metafunc.config
    faults = _faults(config)
    bases = [Path(p) for p in config.getini("patchwrite_fault_base")]
    params: list[Any] = []
    if bases:
        for base in bases:
            for fault in faults:
                params.append(pytest.param(("file", str(base), fault), id=f"{base.stem}-{fault}"))
    else:
        try:
            docs = select(config.option.patchwrite_corpus)
        except ValueError as exc:
            raise pytest.UsageError(f"--patchwrite-corpus: {exc}") from None
        for doc in docs:
            for fault in faults:
                params.append(pytest.param(("corpus", doc.id, fault), id=f"{doc.id}-{fault}"))
    metafunc.parametrize("fault_case", params, indirect=True)


@pytest.fixture
def fault_case(request: pytest.FixtureRequest, tmp_path: Path) -> FaultCase:
    """Return one fault case, its broken HEAD already written in `tmp_path`."""
    from ..files.manuscriptcopy import copy_manuscript_dir
    from ..snapshot.roots import find_root
    from .fixtures import configured_gates

    param = getattr(request, "param", None)
    if param is None:
        pytest.fail("fault_case is parametrized by pytest-patchwrite; do not request it indirectly", pytrace=False)
    kind, source, fault_name = param
    if kind == "corpus":
        doc = DOCUMENTS[source]
        build = request.config.option.patchwrite_corpus_build
        head = doc.head(build)
        fault = inject(head, fault_name)
        path = materialize(doc, tmp_path / source, build, fault.broken)
        case_id = f"{source}-{fault_name}"
    else:
        root = find_root(Path(source))
        work = tmp_path / root.parent.name
        copy_manuscript_dir(root.parent, work, root.stem)
        path = copy_root = work / root.name
        from ..corpus.verify import inject_verified

        try:  # the first site that really breaks the copy, as `patchwrite inject` picks it
            options = request.config.stash[SETTINGS].options  # a machine's hiccup gets one more try (envfaults)
            verified = envfaults.retry_once(lambda: inject_verified(path, fault_name, options))
        except FaultNotApplicable as exc:
            pytest.skip(f"{root}: {exc}")
        fault = verified.fault
        path = verified.path or path  # the root first; a root of only \input lines puts it in the file it reads
        path.write_text(fault.broken, encoding="utf-8", newline="")
        case_id = f"{root.stem}-{fault_name}"
        return FaultCase(case_id, fault, path, configured_gates(request.config, copy_root))
    return FaultCase(case_id, fault, path, configured_gates(request.config, path))
