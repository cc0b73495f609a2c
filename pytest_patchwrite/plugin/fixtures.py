"""Fixtures and assertion helpers for testing edit operators on manuscripts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ..edit import Edit, number_lines
from ..files.inputs import read_text, text_bytes
from ..files.manuscriptcopy import copy_manuscript_dir
from ..flows.transaction import PatchResult
from ..flows.transaction import try_patch as _try_patch
from ..gates.evidence import EvidenceGate
from ..gates.headrules import unified_lines
from ..model import Gate
from ..snapshot.roots import find_root
from ..tex.latex import scan
from .settings import SETTINGS


@dataclass
class ManuscriptCopy:
    """A working copy of a manuscript in a test's `tmp_path`, with the configured gates."""

    path: Path
    gates: list[Gate] = field(default_factory=list)
    max_span: int = 40

    @property
    def directory(self) -> Path:
        """Return the copy's directory (the root's parent)."""
        return self.path.parent

    @property
    def text(self) -> str:
        """Return the root file's current text."""
        return read_text(self.path)

    def numbered(self, relpath: str | None = None) -> str:
        """Return the numbered view of the root (or of a file relative to it) that a proposer sees."""
        return number_lines(read_text(self.directory / relpath if relpath else self.path))


def configured_gates(config: pytest.Config, root: Path) -> list[Gate]:
    """Return the compile gate, the evidence gate and plugin gates, configured from the session."""
    settings = config.stash[SETTINGS]
    options = settings.options
    return [options.compile_gate(root), EvidenceGate(root, options.evidence_config()), *settings.extra_gates]


@pytest.fixture
def manuscript(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str | Path], ManuscriptCopy]:
    """Return a factory: copy a manuscript (its whole directory) into tmp_path and return a ManuscriptCopy."""
    counter = 0

    def make(source: str | Path) -> ManuscriptCopy:
        nonlocal counter
        path = Path(source)
        if not path.exists():
            pytest.fail(f"manuscript {source}: no such file", pytrace=False)
        root = find_root(path)
        counter += 1
        target_dir = tmp_path / f"manuscript{counter}"
        target_dir.mkdir()
        copy_manuscript_dir(root.parent, target_dir, root.stem)
        copy = target_dir / root.name
        settings = request.config.stash[SETTINGS]
        return ManuscriptCopy(copy, configured_gates(request.config, copy), settings.max_span)

    return make


def assert_head_invariant(before: bytes, after: bytes, result: PatchResult) -> None:
    """Fail the test when a patch broke the HEAD invariant: rejected but changed, or accepted but not the candidate."""
    if not result.accepted and after != before:
        pytest.fail(
            f"HEAD invariant broken: the candidate was rejected at {result.stage} ({result.reason}) "
            f"but the file changed ({len(before)} -> {len(after)} bytes)",
            pytrace=False,
        )
    if result.accepted and after != text_bytes(result.text):
        pytest.fail("HEAD invariant broken: the candidate was accepted but the file does not hold it", pytrace=False)


@pytest.fixture
def try_patch(request: pytest.FixtureRequest) -> Callable[..., PatchResult]:
    """Return `run(target, edit, gates=None)`: apply an EDIT candidate and check the HEAD invariant after it."""

    def run(target: ManuscriptCopy | str | Path, edit: str | Edit, gates: list[Gate] | None = None) -> PatchResult:
        if isinstance(target, ManuscriptCopy):
            path, default, max_span = target.path, target.gates, target.max_span
        else:
            path = Path(target)
            default = configured_gates(request.config, find_root(path))
            max_span = request.config.stash[SETTINGS].max_span
        before = path.read_bytes()
        result = _try_patch(path, edit, default if gates is None else gates, max_span=max_span)
        assert_head_invariant(before, path.read_bytes(), result)
        return result

    return run


@dataclass(frozen=True)
class EvidenceTokens:
    """The numbers and cite keys of a text, compared as multisets (what an edit must not move)."""

    text: str
    kinds: tuple[str, ...] = ("numbers", "cites")

    def tokens(self) -> Counter[tuple[str, str]]:
        """Return the multiset of (kind, token) pairs."""
        found = scan(self.text)
        out: Counter[tuple[str, str]] = Counter()
        if "numbers" in self.kinds:
            out.update(("number", n.text) for n in found.numbers)
        if "cites" in self.kinds:
            out.update(("cite", c.key) for c in found.citations)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvidenceTokens):
            return NotImplemented
        return self.tokens() == other.tokens()

    def __hash__(self) -> int:
        return hash(self.text)


def explain_moved(head: EvidenceTokens, committed: EvidenceTokens) -> list[str]:
    """Return lines naming the numbers and keys that moved, then a short line diff."""
    before, after = head.tokens(), committed.tokens()
    lines = ["numbers or cite keys moved:"]
    lines += [f"  - {kind} {token}" for (kind, token), n in (before - after).items() for _ in range(n)]
    lines += [f"  + {kind} {token}" for (kind, token), n in (after - before).items() for _ in range(n)]
    diff = unified_lines(head.text, committed.text)  # the diff the evidence gate computed for the same pair
    if diff:
        lines.append("line diff:")
        lines += [f"  {line}" for line in diff[:20]]
        if len(diff) > 20:
            lines.append(f"  ... {len(diff) - 20} more diff lines")
    return lines


def assert_preserved(head: str, committed: str, tokens: Iterable[str] = ("numbers", "cites")) -> None:
    """Fail unless `committed` holds exactly the numbers and cite keys of `head`."""
    kinds = tuple(tokens)
    left, right = EvidenceTokens(head, kinds), EvidenceTokens(committed, kinds)
    if left != right:
        pytest.fail("\n".join(explain_moved(left, right)), pytrace=False)


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any, right: Any) -> list[str] | None:
    if op == "==" and isinstance(left, EvidenceTokens) and isinstance(right, EvidenceTokens):
        return ["EvidenceTokens differ", *explain_moved(left, right)]
    return None
