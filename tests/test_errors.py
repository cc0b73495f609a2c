"""The error model at the command line: 1 only for a rejected edit, 2 for bad input (one line), 3 for a bug."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_patchwrite.cli import main
from pytest_patchwrite.errors import InputError, PatchwriteError

HEAD = "\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n"


def run(*args: str, stdin: bytes = b"", timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout)


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "doc.tex"
    path.write_text(HEAD)
    return path


def _one_error_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


def test_error_types_carry_file_line_and_reason() -> None:
    error = InputError("paper/main.tex", "not valid UTF-8", line=3, reason="not_utf8")
    assert isinstance(error, PatchwriteError)
    assert (str(error), error.path, error.line, error.reason) == (
        "paper/main.tex:3: not valid UTF-8",
        "paper/main.tex",
        3,
        "not_utf8",
    )


@pytest.mark.parametrize("value", ["inf", "-1", "nan", "0", "1e400", "soon"])
def test_timeout_accepts_positive_finite_seconds_only(doc: Path, value: str) -> None:
    proc = run("apply", str(doc), "-", "--no-compile-gate", "--timeout", value, stdin=b"EDIT 3 3\nHi.\n")
    assert proc.returncode == 2
    assert "--timeout" in proc.stderr.decode() and doc.read_text() == HEAD


def test_invalid_utf8_in_an_edit_body_is_a_rejection_not_a_crash(doc: Path) -> None:
    proc = run("apply", str(doc), "-", "--no-compile-gate", "--no-evidence-gate", stdin=b"EDIT 3 3\nHall\xf6.\n")
    assert proc.returncode == 1, proc.stderr
    assert b"invalid_text" in proc.stdout and b"Traceback" not in proc.stderr
    assert doc.read_text() == HEAD


def test_a_header_number_of_5000_digits_is_a_rejection(doc: Path) -> None:
    proc = run(
        "apply", str(doc), "-", "--no-compile-gate", "--no-evidence-gate", stdin=f"EDIT 1 {'9' * 5000}\nx\n".encode()
    )
    assert proc.returncode == 1 and b"past_eof" in proc.stdout and len(proc.stdout) < 500


def test_a_fifo_target_is_an_input_error_and_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "main.tex"
    os.mkfifo(fifo)
    proc = run("apply", str(fifo), "-", stdin=b"EDIT 1 1\nx\n", timeout=60)
    assert proc.returncode == 2
    assert "is a FIFO (named pipe), not a regular file" in _one_error_line(proc)


def test_a_read_only_file_needs_the_flag(doc: Path) -> None:
    doc.chmod(0o444)
    proc = run("apply", str(doc), "-", "--no-compile-gate", "--no-evidence-gate", stdin=b"EDIT 3 3\nHi.\n")
    assert proc.returncode == 2 and "is read-only" in _one_error_line(proc)
    assert doc.read_text() == HEAD
    proc = run(
        "apply",
        str(doc),
        "-",
        "--no-compile-gate",
        "--no-evidence-gate",
        "--replace-read-only",
        stdin=b"EDIT 3 3\nHi.\n",
    )
    assert proc.returncode == 0 and "Hi." in doc.read_text()


def test_a_device_as_a_log_is_an_input_error(tmp_path: Path) -> None:
    paper = tmp_path / "main.tex"
    paper.write_text("% !patchwrite log = /dev/zero\n" + HEAD)
    # trusted, so the path is followed out of the tree; untrusted it leads outside it: exit 2 too, never opened
    proc = run(
        "apply", str(paper), "-", "--no-compile-gate", "--trusted-input", stdin=b"EDIT 4 4\nHello 91.4.\n", timeout=60
    )
    assert proc.returncode == 2
    assert "/dev/zero: is a character device" in _one_error_line(proc)


def test_invalid_yaml_and_deep_json_logs_are_input_errors(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    for name, content in [("r.yaml", "a: [1, 2\nb: c: d\n"), ("r.json", "[" * 5000 + "]" * 5000)]:
        paper = tmp_path / f"{name}.tex"
        (tmp_path / name).write_text(content)
        paper.write_text(f"% !patchwrite log = {name}\n" + HEAD)
        proc = run("apply", str(paper), "-", "--no-compile-gate", stdin=b"EDIT 4 4\nHello 91.4.\n")
        assert proc.returncode == 2, proc.stderr
        assert name in _one_error_line(proc)


def test_an_unexpected_exception_is_exit_3_with_a_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_patchwrite.commands import number

    def broken(_args: object) -> int:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(number, "run", broken)
    assert main(["number", str(tmp_path / "x.tex")]) == 3
    err = capsys.readouterr().err
    assert "internal error: ZeroDivisionError" in err and "please report it" in err and "--debug" in err
    assert "Traceback" not in err
    assert main(["number", str(tmp_path / "x.tex"), "--debug"]) == 3
    assert "Traceback" in capsys.readouterr().err


def test_only_a_rejection_is_exit_1(doc: Path) -> None:
    proc = run("apply", str(doc), "-", "--no-compile-gate", "--no-evidence-gate", stdin=b"EDIT 9 9\nx\n")
    assert proc.returncode == 1 and b"past_eof" in proc.stdout
    proc = run("apply", str(doc), "-", "--no-compile-gate", "--no-evidence-gate", stdin=b"")
    assert proc.returncode == 1 and b"no_edit" in proc.stdout  # an empty reply is a candidate with no edit
    proc = run("apply", str(doc), str(doc.parent / "no-such-reply.txt"), "--no-compile-gate", "--no-evidence-gate")
    assert proc.returncode == 2 and b"no such file" in proc.stderr  # a reply that cannot be read is bad input
