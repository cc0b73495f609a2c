"""The HEAD invariant of try_patch: rejections keep bytes and mtime, commits are atomic and serial."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_patchwrite.edit import Edit
from pytest_patchwrite.errors import InputError
from pytest_patchwrite.files.inputs import read_text
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.model import GateResult, PatchContext, Violation

HEAD = "".join(f"line {i}\n" for i in range(1, 21))


class ForbidWord:
    """A real gate: rejects any candidate containing a word."""

    stage = "evidence"

    def __init__(self, word: str) -> None:
        self.word = word
        self.seen: list[str] = []

    def check(self, text: str, context: PatchContext) -> GateResult:
        self.seen.append(text)
        lines = [i for i, line in enumerate(text.splitlines(), 1) if self.word in line]
        violations = [Violation("forbidden", str(context.path), i, self.word, "is forbidden") for i in lines]
        return GateResult(not violations, violations, "forbid")


def _digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    path = tmp_path / "main.tex"
    path.write_text(HEAD)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    return path


def test_rejected_by_gate_keeps_bytes_and_mtime(paper: Path) -> None:
    before = _digest(paper)
    gate = ForbidWord("BAD")
    result = try_patch(paper, "```EDIT 3 3\nBAD line\n```", [gate])
    assert not result.accepted
    assert result.stage == "evidence"
    assert result.reason == "forbidden:BAD"
    assert [(v.line, v.token) for v in result.violations] == [(3, "BAD")]
    assert gate.seen and "BAD line" in gate.seen[0]
    assert _digest(paper) == before
    assert result.text == HEAD


def test_rejected_at_parse_runs_no_gate(paper: Path) -> None:
    before = _digest(paper)
    gate = ForbidWord("BAD")
    result = try_patch(paper, "```EDIT 3 10\nok\n```", [gate], max_span=5)
    assert (result.accepted, result.stage, result.reason) == (False, "parse", "span_too_long")
    assert gate.seen == []
    assert _digest(paper) == before


def test_accepted_commits_exactly_the_candidate(paper: Path) -> None:
    paper.chmod(0o640)
    result = try_patch(paper, "```EDIT 3 4\nthree\n```", [ForbidWord("BAD")])
    assert result.accepted and result.stage is None and result.span == (3, 4)
    assert paper.read_text() == HEAD.replace("line 3\nline 4\n", "three\n")
    assert paper.stat().st_mode & 0o777 == 0o640
    assert not [p for p in paper.parent.iterdir() if p.name.endswith(".patchwrite-tmp")]
    expected = {"accepted": True, "stage": None, "reason": None, "span": [3, 4], "violations": [], "skipped": {}}
    assert result.to_json() == expected


def test_accepts_edit_objects_and_delete(paper: Path) -> None:
    assert try_patch(paper, Edit(1, 12, ("x",)), max_span=11).reason == "span_too_long"
    assert try_patch(paper, Edit(1, 19, (), "DELETE")).accepted
    assert paper.read_text() == "line 20\n"
    rejected = try_patch(paper, Edit(1, 50, ("x",)), max_span=40)
    assert rejected.reason == "past_eof"


def test_input_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        try_patch(tmp_path / "missing.tex", "EDIT 1 1\nx")
    bad = tmp_path / "latin1.tex"
    bad.write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(InputError) as info:
        read_text(bad)
    assert str(info.value).startswith(f"{bad}:2:")
    assert "UTF-8" in str(info.value)


_CRASH = textwrap.dedent(
    """
    import os, signal, sys
    from pytest_patchwrite.flows.transaction import try_patch

    def crash(src, dst):
        os.kill(os.getpid(), signal.SIGKILL)

    os.replace = crash  # die at the worst instant: temp file written and synced, not yet renamed
    try_patch(sys.argv[1], "```EDIT 2 2\\nNEW\\n```")
    """
)


def test_crash_before_replace_leaves_old_bytes(paper: Path) -> None:
    before = paper.read_bytes()
    proc = subprocess.run([sys.executable, "-c", _CRASH, str(paper)], capture_output=True)
    assert proc.returncode == -9
    temps = [p for p in paper.parent.iterdir() if p.name.endswith(".patchwrite-tmp")]
    assert len(temps) == 1 and b"NEW" in temps[0].read_bytes()
    assert paper.read_bytes() == before


def _racer(path: str, line: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    barrier.wait()
    result = try_patch(path, f"```EDIT {line} {line}\nracer {line}\n```")
    assert result.accepted


def test_concurrent_patches_serialize_and_lose_nothing(paper: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(8)
    procs = [ctx.Process(target=_racer, args=(str(paper), 2 * i + 1, barrier)) for i in range(8)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [p.exitcode for p in procs] == [0] * 8
    expected = HEAD
    for i in range(8):
        expected = expected.replace(f"line {2 * i + 1}\n", f"racer {2 * i + 1}\n", 1)
    assert paper.read_text() == expected


def test_a_symlinked_target_is_edited_through_the_link(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    real = tmp_path / "shared" / "intro.tex"
    real.write_text(HEAD)
    link = tmp_path / "intro.tex"
    link.symlink_to(Path("shared") / "intro.tex")
    result = try_patch(link, "EDIT 2 2\ntwo\n")
    assert result.accepted
    assert link.is_symlink() and os.readlink(link) == str(Path("shared") / "intro.tex")
    assert real.read_text() == HEAD.replace("line 2\n", "two\n")
    assert not [p for p in (tmp_path / "shared").iterdir() if p.name.endswith(".patchwrite-tmp")]


def test_a_symlink_leaving_the_tree_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.tex"
    outside.write_text(HEAD)
    (tmp_path / "paper").mkdir()
    link = tmp_path / "paper" / "main.tex"
    link.symlink_to(outside)
    with pytest.raises(InputError, match=r"main.tex: is a symlink to .*outside.tex, outside .*paper"):
        try_patch(link, "EDIT 2 2\ntwo\n")
    assert outside.read_text() == HEAD and link.is_symlink()
    assert try_patch(link, "EDIT 2 2\ntwo\n", tree=tmp_path).accepted  # a wider tree, on request


def test_a_read_only_file_is_refused_unless_asked(paper: Path) -> None:
    paper.chmod(0o444)
    before = _digest(paper)
    with pytest.raises(InputError, match="is read-only; make it writable") as info:
        try_patch(paper, "EDIT 1 1\none\n")
    assert info.value.reason == "read_only" and _digest(paper) == before
    assert try_patch(paper, "EDIT 1 1\none\n", replace_read_only=True).accepted
    assert paper.read_text().startswith("one\n") and paper.stat().st_mode & 0o777 == 0o444


def test_invalid_text_in_a_body_is_rejected_before_any_gate(paper: Path) -> None:
    gate = ForbidWord("never")
    before = _digest(paper)
    result = try_patch(paper, Edit(3, 3, ("bad \udcff",)), [gate])
    assert (result.accepted, result.stage, result.reason) == (False, "parse", "invalid_text")
    assert gate.seen == [] and _digest(paper) == before


def test_a_revision_other_than_the_files_bytes_is_refused_before_any_gate(tmp_path: Path) -> None:
    path = tmp_path / "doc.tex"
    path.write_text(HEAD)
    gate = ForbidWord("never")
    before = _digest(path)
    stale = try_patch(path, "EDIT 2 2\nchanged\n", [gate], revision=hashlib.sha256(b"other bytes").hexdigest())
    assert (stale.accepted, stale.stage, stale.reason) == (False, None, "stale_revision")
    assert _digest(path) == before and gate.seen == []
    fresh = try_patch(path, "EDIT 2 2\nchanged\n", [gate], revision=hashlib.sha256(HEAD.encode()).hexdigest())
    assert fresh.accepted and read_text(path).splitlines()[1] == "changed"
