"""The plugin under hostile trees: unreadable manuscripts fail one item, FIFOs and symlink loops are harmless."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = "\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n"
# evidence items only: these tests are about collection and errors, not the engine
NO_ENGINE = ["-p", "no:randomly", "-k", "not compile and not citations"]


def test_a_non_utf8_root_fails_one_item_and_the_others_still_run(pytester: pytest.Pytester) -> None:
    (pytester.path / "a").mkdir()
    (pytester.path / "a" / "main.tex").write_bytes(b"\\documentclass{article}\n\\begin{document}\nCaf\xe9\n")
    (pytester.path / "b").mkdir()
    (pytester.path / "b" / "main.tex").write_text(ROOT)
    result = pytester.runpytest_subprocess(*NO_ENGINE, "-rA")
    out = result.stdout.str()
    assert "Interrupted" not in out and "error during collection" not in out
    assert "patchwrite: a/main.tex:3: not valid UTF-8 (byte 0xe9)" in out
    result.assert_outcomes(failed=1, passed=1, skipped=1, deselected=2)  # b: placeholders passes, numbers skips


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_symlinked_directory_loop_collects_each_manuscript_once(pytester: pytest.Pytester, mode: list[str]) -> None:
    (pytester.path / "paper").mkdir()
    (pytester.path / "paper" / "main.tex").write_text(ROOT)
    (pytester.path / "paper" / "loop").symlink_to("..")
    result = pytester.runpytest_subprocess("--collect-only", "-q", *mode)
    items = [line for line in result.stdout.lines if "main.tex::" in line]
    assert len(items) == 4, result.stdout.str()


def test_a_fifo_named_tex_beside_a_manuscript_never_blocks(pytester: pytest.Pytester) -> None:
    (pytester.path / "main.tex").write_text(ROOT)
    os.mkfifo(pytester.path / "notes.tex")
    result = pytester.runpytest_subprocess("--collect-only", "-q", timeout=60)
    assert result.ret == 0
    assert [line for line in result.stdout.lines if "::" in line] == [
        f"main.tex::{name}" for name in ("compile", "citations", "numbers", "placeholders")
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_root_is_reported(pytester: pytest.Pytester) -> None:
    path = pytester.path / "main.tex"
    path.write_text(ROOT)
    path.chmod(0)
    result = pytester.runpytest_subprocess(*NO_ENGINE)
    assert "main.tex: cannot be read (Permission denied)" in result.stdout.str()
    result.assert_outcomes(failed=1)


@pytest.mark.parametrize("value", ["inf", "-1", "nan", "0"])
def test_timeout_option_takes_positive_finite_seconds(pytester: pytest.Pytester, value: str) -> None:
    (pytester.path / "main.tex").write_text(ROOT)
    result = pytester.runpytest_subprocess(f"--patchwrite-timeout={value}", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "is not a positive, finite number of seconds" in result.stderr.str()


def test_a_bad_log_fails_the_numbers_item_with_a_located_message(pytester: pytest.Pytester) -> None:
    pytest.importorskip("yaml")
    (pytester.path / "r.yaml").write_text("a: [1, 2\nb: c: d\n")
    (pytester.path / "main.tex").write_text("% !patchwrite log = r.yaml\n" + ROOT)
    result = pytester.runpytest_subprocess(*NO_ENGINE)
    out = result.stdout.str()
    assert "r.yaml:" in out and "cannot be parsed as YAML" in out and "Traceback" not in out
    assert Path(pytester.path / "main.tex").read_text().startswith("% !patchwrite")
