"""Crash leftovers: temp files and sandboxes of killed processes are swept, live ones are kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pytest_patchwrite.cli import main
from pytest_patchwrite.files.tempfiles import (
    TEMP_SUFFIX,
    owned_temp_dir,
    sweep_dir,
    sweep_temp_root,
    temp_file_prefix,
    temp_root,
)
from pytest_patchwrite.flows.transaction import try_patch

# a child that leaves one owned temp file beside the target and one sandbox in the temp root, then waits
CHILD = """
import os, sys, tempfile, time
from pathlib import Path
from pytest_patchwrite.files.tempfiles import TEMP_SUFFIX, make_owned_temp_dir, temp_file_prefix
target = Path(sys.argv[1])
fd, _ = tempfile.mkstemp(dir=target.parent, prefix=temp_file_prefix(target), suffix=TEMP_SUFFIX)
os.write(fd, b"half a manuscript")
box = make_owned_temp_dir("sandbox")
(box / "ro").mkdir()
(box / "ro" / "main.log").write_text("log")
os.chmod(box / "ro", 0o500)
print(box, flush=True)
time.sleep(60)
"""


def _killed_child(target: Path) -> Path:
    with subprocess.Popen([sys.executable, "-c", CHILD, str(target)], stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        box = Path(child.stdout.readline().strip())
        assert box.is_dir()  # made while its owner lives: no sweeper may take it yet
        child.send_signal(signal.SIGKILL)
    return box


def _temps(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.endswith(TEMP_SUFFIX))


def test_killed_writer_leftovers_are_swept_by_the_next_try_patch(tmp_path: Path) -> None:
    paper = tmp_path / "main.tex"
    paper.write_text("a\nb\n")
    box = _killed_child(paper)
    # the box is not asserted here: once its owner is dead, any patchwrite process of this user (the suite's
    # other worker) may sweep it first, as a loaded CI run did
    assert len(_temps(tmp_path)) == 1
    result = try_patch(paper, "EDIT 1 1\nA\n")
    assert result.accepted and paper.read_text() == "A\nb\n"
    assert _temps(tmp_path) == []
    sweep_temp_root()  # another process of this user may sweep it first: either way it is gone
    assert not box.exists()


def test_a_live_process_keeps_its_temp_files(tmp_path: Path) -> None:
    paper = tmp_path / "main.tex"
    paper.write_text("a\n")
    mine = tmp_path / f"{temp_file_prefix(paper)}abcdefgh{TEMP_SUFFIX}"
    mine.write_text("in flight")
    with owned_temp_dir("sandbox") as box:
        assert sweep_dir(tmp_path) == [] and mine.exists()
        assert Path(box) not in sweep_temp_root() and Path(box).is_dir()
        assert Path(box).parent == temp_root()
    assert oct(temp_root().stat().st_mode & 0o777) == "0o700"


def test_legacy_temp_files_go_only_when_old(tmp_path: Path) -> None:
    old, fresh = tmp_path / f".main.tex.abcd1234{TEMP_SUFFIX}", tmp_path / f".main.tex.wxyz9876{TEMP_SUFFIX}"
    old.write_text("x")
    fresh.write_text("y")
    long_ago = time.time() - 2 * 86400
    os.utime(old, (long_ago, long_ago))
    unrelated = tmp_path / "notes.patchwrite-tmp.txt"
    unrelated.write_text("mine")
    assert sweep_dir(tmp_path) == [old]
    assert fresh.exists() and unrelated.exists()


def test_clean_command_sweeps_a_tree(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    sub = tmp_path / "paper" / "sections"
    sub.mkdir(parents=True)
    target = sub / "intro.tex"
    target.write_text("x\n")
    box = _killed_child(target)
    assert main(["clean", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert _temps(sub) == [] and not box.exists()
    assert "stale temp file(s)" in out
    assert target.read_text() == "x\n"


def test_clean_on_a_missing_directory_is_an_input_error(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    assert main(["clean", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().err
