"""Bounded inputs: only regular files are read, never blocking, within size caps; logs cannot explode."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

import pytest

from pytest_patchwrite.errors import InputError, InputTooLarge, NotRegularFile
from pytest_patchwrite.files.inputs import read_bytes, read_text
from pytest_patchwrite.files.paths import Boundary
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.numbers.explog import EvidenceLog, load_log_file
from pytest_patchwrite.numbers.logread import load_logs


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "main.tex"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match="main.tex: is a FIFO"):
        read_text(fifo)
    with pytest.raises(NotRegularFile):
        try_patch(fifo, "EDIT 1 1\nx\n")


def test_a_device_as_a_log_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFile, match="/dev/zero: is a character device"):
        # trusted: reads may leave the tree, but a device is still never read (untrusted, it is outside_tree)
        load_logs(["/dev/zero"], tmp_path, Boundary(tmp_path, trusted=True))


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFile, match="is a directory"):
        read_bytes(tmp_path)


def test_size_caps_are_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "run.log"
    big.write_bytes(b"0.5\n" * 300_000)  # 1.2 MB
    monkeypatch.setenv("PATCHWRITE_MAX_LOG_MB", "1")
    with pytest.raises(InputTooLarge, match=r"run.log: is 1.1 MB; the cap for a log is 1 MB .*PATCHWRITE_MAX_LOG_MB"):
        load_log_file(big, EvidenceLog())
    monkeypatch.setenv("PATCHWRITE_MAX_LOG_MB", "2")
    log = EvidenceLog()
    load_log_file(big, log)
    assert log.attests(Decimal("0.5"))
    monkeypatch.setenv("PATCHWRITE_MAX_LOG_MB", "inf")
    with pytest.raises(InputError, match="PATCHWRITE_MAX_LOG_MB: 'inf' is not a positive size"):
        read_bytes(big, "log")
    monkeypatch.setenv("PATCHWRITE_MAX_EDIT_MB", "1")
    with pytest.raises(InputTooLarge, match=r"is 1.1 MB; the cap for an edit is 1 MB"):  # "an edit", not "a edit"
        read_bytes(big, "edit")


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "main.tex"
    path.write_bytes(b"ok\nstill ok\nbad \xff here\n")
    with pytest.raises(InputError) as info:
        read_text(path)
    assert str(info.value) == f"{path}:3: not valid UTF-8 (byte 0xff)"
    assert info.value.line == 3 and info.value.reason == "not_utf8"


def test_a_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    lines = ['a: &a ["1.5", "1.5", "1.5", "1.5", "1.5", "1.5", "1.5", "1.5", "1.5"]']
    for i in range(1, 20):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [{', '.join(['*' + chr(96 + i)] * 9)}]")
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"bomb.yaml:\d+: more than 100 YAML aliases"):
        load_logs(["bomb.yaml"], tmp_path)


def test_a_few_yaml_aliases_are_fine(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    (tmp_path / "cfg.yaml").write_text("base: &b {lr: 0.003}\nrun1: *b\nrun2: *b\n")
    assert load_logs(["cfg.yaml"], tmp_path).attests(Decimal("0.003"))


def test_invalid_yaml_is_a_located_input_error(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    (tmp_path / "bad.yaml").write_text("a: 1\nb: [2, 3\nc: 4\n")
    with pytest.raises(InputError, match=r"bad.yaml:\d+: cannot be parsed as YAML"):
        load_logs(["bad.yaml"], tmp_path)


@pytest.mark.parametrize(
    "name,text", [("deep.json", "[" * 100_000 + "]" * 100_000), ("deep.toml", "a = " + "[" * 5000)]
)
def test_deep_nesting_is_an_input_error_not_a_recursion_error(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=name):
        load_logs([name], tmp_path)


def test_csv_with_a_huge_field_and_nul_bytes_is_read(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("step,acc\n1," + "x" * 200_000 + "\n2,0.914\x00\n")
    assert load_logs(["r.csv"], tmp_path).attests(Decimal("91.4"))


def test_a_long_digit_run_in_a_log_is_scanned(tmp_path: Path) -> None:
    # a run of digits followed by a letter was quadratic in the token regex
    (tmp_path / "r.txt").write_text("1" * 2_000_000 + "a 0.5\n")
    assert load_logs(["r.txt"], tmp_path).attests(Decimal("0.5"))


def test_a_nul_in_a_bibliography_name_is_a_located_violation(tmp_path: Path) -> None:
    from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
    from pytest_patchwrite.snapshot.manuscript import load_manuscript

    root = tmp_path / "main.tex"
    root.write_text(
        "\\documentclass{article}\n\\begin{document}\n\\cite{a}\n\\bibliography{re\x00fs}\n\\end{document}\n"
    )
    report = evaluate(load_manuscript(root), EvidenceConfig())
    # was a ValueError from subprocess; untrusted input names no file outside the tree
    located = [v for v in report.citations if v.kind in ("missing_bib", "outside_tree")]
    assert located and located[0].line == 4


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_directory_is_an_input_error(tmp_path: Path) -> None:
    paper = tmp_path / "main.tex"
    paper.write_text("a\n")
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(InputError, match="is not writable"):
            try_patch(paper, "EDIT 1 1\nb\n")
    finally:
        tmp_path.chmod(0o755)
    assert paper.read_text() == "a\n"


def test_the_manuscript_cap_holds_for_all_its_files_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_patchwrite.snapshot.manuscript import load_manuscript

    monkeypatch.setenv("PATCHWRITE_MAX_MANUSCRIPT_MB", "1")
    part = "Prose with 91.4 in it.\n" * 30_000  # 0.69 MB: each file alone is under the cap
    (tmp_path / "a.tex").write_text(part)
    (tmp_path / "b.tex").write_text(part)
    root = tmp_path / "main.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\n\\input{a}\n\\input{b}\n\\end{document}\n")
    with pytest.raises(InputTooLarge, match=r"b\.tex: brings the manuscript's text to more than 1 MB"):
        load_manuscript(root)
    monkeypatch.setenv("PATCHWRITE_MAX_MANUSCRIPT_MB", "2")
    assert len(load_manuscript(root).files) == 3


@pytest.mark.parametrize("value", ["abc", "-1", "0", "nan", "inf"])
def test_a_bad_limit_in_the_environment_is_an_input_error_naming_it(
    value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import subprocess
    import sys

    from pytest_patchwrite.engine.sandboxlimits import Limits

    monkeypatch.setenv("PATCHWRITE_SANDBOX_MEMORY_MB", value)
    with pytest.raises(InputError, match="PATCHWRITE_SANDBOX_MEMORY_MB: .* is not a positive number"):
        Limits.from_env()
    monkeypatch.delenv("PATCHWRITE_SANDBOX_MEMORY_MB")
    monkeypatch.setenv("PATCHWRITE_MAX_LOG_MB", value)
    (tmp_path / "run.log").write_text("0.5\n")
    with pytest.raises(InputError, match="PATCHWRITE_MAX_LOG_MB: .* is not a positive size in megabytes"):
        load_logs(["run.log"], tmp_path)
    # through the command line: exit 2 (bad input), never 3 (internal error)
    (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}x\\end{document}\n")
    env = {**os.environ, "PATCHWRITE_SANDBOX_MEMORY_MB": value}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", "check", str(tmp_path / "main.tex")],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "PATCHWRITE_SANDBOX_MEMORY_MB" in proc.stderr and "Traceback" not in proc.stderr
