"""Big experimental logs are read as streams: hashed while read, values kept line by line, never the whole text.

A log larger than `inputs.HELD_FILE_BYTES` (8 MB) is not held in the snapshot; these tests write real
logs just past it (about 9 MB) and check that their values still attest and bind, that a log rewritten
between two checks is read again (its content hash, not its metadata, keys the cache), that a
streamed read gives exactly the entries a whole read gives, and the caps of formats parsed whole.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import OrderedDict
from decimal import Decimal
from pathlib import Path

import pytest

from pytest_patchwrite.errors import InputError, InputTooLarge
from pytest_patchwrite.files import inputs, streamread
from pytest_patchwrite.flows.bind import bind_root, write_bindings
from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.numbers import logread
from pytest_patchwrite.numeric import Sieve
from pytest_patchwrite.snapshot.manuscript import load_manuscript

PAST_HELD = inputs.HELD_FILE_BYTES + 1024 * 1024


def _training_log(path: Path, kind: str, last: str) -> None:
    """Write a CSV or text training log just past the held size whose last line holds `last` (the test accuracy)."""
    rng = random.Random(5)
    with open(path, "w") as handle:
        if kind == "csv":
            handle.write("step,loss,accuracy\n")
        written, step = 0, 0
        while written < PAST_HELD:
            rows = [
                f"{step + i},{1 + 2 * rng.random():.6f},{0.8 * rng.random():.4f}\n"
                if kind == "csv"
                else f"step {step + i} loss {1 + 2 * rng.random():.6f} acc {0.8 * rng.random():.4f}\n"
                for i in range(5000)
            ]
            step += 5000
            written += handle.write("".join(rows))
        handle.write(f"99999999,0.5,{last}\n" if kind == "csv" else f"final test accuracy {last}\n")
    assert path.stat().st_size > inputs.HELD_FILE_BYTES


def _paper(tmp_path: Path, kind: str, last: str = "0.91372", printed: str = "91.372") -> Path:
    log = tmp_path / f"train.{kind}"
    _training_log(log, kind, last)
    root = tmp_path / "main.tex"
    root.write_text(
        f"% !patchwrite log = {log.name}\n\\documentclass{{article}}\n\\begin{{document}}\n"
        f"The final test accuracy was {printed}\\% after the last epoch.\n\\end{{document}}\n"
    )
    return root


def _numbers(root: Path) -> list[str]:
    report = evaluate(load_manuscript(root), EvidenceConfig())
    assert report.numbers is not None
    return [f"{v.kind} {v.token}" for v in report.numbers if v.severity == "error"]


@pytest.mark.parametrize("kind", ["csv", "txt"])
def test_a_number_on_the_last_line_of_a_big_log_attests_and_binds(tmp_path: Path, kind: str) -> None:
    root = _paper(tmp_path, kind)
    manuscript = load_manuscript(root)
    report = evaluate(manuscript, EvidenceConfig())
    assert report.numbers == [] and report.log_files == [tmp_path / f"train.{kind}"]
    assert manuscript.data == {}  # the big log is not held in the snapshot
    outcome = bind_root(root, EvidenceConfig())
    (bound,) = outcome.reconciled.result.bound
    at = "row " if kind == "csv" else "line "
    assert bound.best.entry.raw == "0.91372" and bound.best.entry.at.startswith(at)
    assert bound.best.transform == "percent"
    write_bindings(outcome.path, outcome.new_text)
    assert _numbers(root) == []  # the bindings lock finds the entry in the streamed log too
    root.write_text(root.read_text().replace("91.372", "91.373"))
    assert _numbers(root) == ["binding_mismatch 91.373\\%"]


@pytest.mark.parametrize("kind", ["csv", "txt"])
def test_a_big_log_rewritten_between_two_checks_is_read_again(tmp_path: Path, kind: str) -> None:
    root = _paper(tmp_path, kind)
    assert _numbers(root) == []
    log = tmp_path / f"train.{kind}"
    info = log.stat()
    data = log.read_bytes()
    log.write_bytes(data.replace(b"0.91372", b"0.91472"))  # same size, mtime restored: only the bytes tell
    os.utime(log, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert _numbers(root) == ["unattested_number 91.372\\%"]
    root.write_text(root.read_text().replace("91.372", "91.472"))
    assert _numbers(root) == []


LOGS = {
    "a.csv": 'name,acc,f1\r\nbase,0.914,0.87\r\n"multi\nline",1.5,2\r\nours,0.93,0.9\r\n',
    "b.tsv": "model\tacc\nA\t91.4\nB\t92.0\n",
    "c.jsonl": '{"run": "a", "acc": 0.91}\n\n{"run": "b", "acc": 0.93, "x": {"y": [1.5, 2.5]}}\n3.14\n',
    "d.txt": "epoch 1 loss 0.55 acc 0.91\r\nepoch 2 loss 0.45\rline\x0cff 3.3\n\nfinal 0.9137\n",
    "e.log": "".join(f"it {i} {i / 7:.4f} {i * 1.5:.2f}%\n" for i in range(300)) + "last 0.123",
}


def _entries(path: Path, sieve: Sieve | None, want: set[str]) -> list[tuple[str, ...]]:
    data = logread.load_entries(path, sieve, want)
    return [(e.at, e.raw, e.row, e.column, e.label, str(e.rows), e.kind) for e in (*data.entries, *data.means)]


@pytest.mark.parametrize("name", sorted(LOGS))
def test_a_streamed_log_gives_the_entries_and_tokens_a_whole_read_gives(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / name
    path.write_bytes(LOGS[name].encode())
    sieve = Sieve([(0.9, 0.95), (1.4, 1.6), (91.0, 92.5)])
    want = {"line 3", "[0].acc", "row 1 (name=base), column f1"}
    whole = _entries(path, None, set()), set(logread.load_logs([name], tmp_path).raw)
    sieved = [e for e in _entries(path, sieve, want) if e[0] in want or sieve.fits(float(e[1])) or e[6] == "mean"]
    monkeypatch.setattr(inputs, "HELD_FILE_BYTES", 0)  # everything is streamed ...
    monkeypatch.setattr(streamread, "STREAM_PIECE", 5)  # ... in pieces that cut lines, cells and characters apart
    monkeypatch.setattr(logread, "_PARSED", OrderedDict())  # read again, not answered from the cache
    assert (_entries(path, None, set()), set(logread.load_logs([name], tmp_path).raw)) == whole
    monkeypatch.setattr(logread, "_PARSED", OrderedDict())  # a parse that kept everything would answer a sieve
    streamed = _entries(path, sieve, want)
    assert all(e in streamed for e in sieved)  # the sieve keeps what fits, and every locator asked for
    assert all(e[0] in want or sieve.fits(float(e[1])) or e[6] == "mean" for e in streamed)


def test_a_bad_byte_in_a_streamed_log_names_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "HELD_FILE_BYTES", 0)
    monkeypatch.setattr(streamread, "STREAM_PIECE", 7)
    path = tmp_path / "run.txt"
    path.write_bytes(b"loss 0.5\nacc 0.9\nbad \xff here 1.5\n")
    with pytest.raises(InputError) as info:
        logread.load_logs(["run.txt"], tmp_path)
    assert str(info.value) == f"{path}:3: not valid UTF-8 (byte 0xff)"


def test_a_line_past_the_cap_of_a_streamed_log_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "HELD_FILE_BYTES", 0)
    monkeypatch.setattr(streamread, "STREAM_PIECE", 64 * 1024)  # the line spans pieces: it would have to be held
    monkeypatch.setenv("PATCHWRITE_MAX_LOG_DOCUMENT_MB", "1")
    path = tmp_path / "run.txt"
    path.write_bytes(b"acc 0.9\n" + b"7" * (2 * 1024 * 1024) + b"\n")
    with pytest.raises(InputTooLarge, match=r"run.txt:2: holds a line longer than 1 MB"):
        logread.load_logs(["run.txt"], tmp_path)


def test_a_json_log_past_the_document_cap_names_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"runs": [{"acc": i / 1000} for i in range(120_000)]}))  # about 1.6 MB
    monkeypatch.setenv("PATCHWRITE_MAX_LOG_DOCUMENT_MB", "1")
    with pytest.raises(InputTooLarge, match=r"results.json: is 1\.\d MB; a JSON log is parsed whole and may hold 1 MB"):
        logread.load_logs(["results.json"], tmp_path)
    monkeypatch.setenv("PATCHWRITE_MAX_LOG_DOCUMENT_MB", "2")
    assert logread.load_logs(["results.json"], tmp_path).attests(Decimal("0.119"))


def test_a_timeout_while_reading_a_big_log_names_it_and_keeps_the_other_locks(tmp_path: Path) -> None:
    """The number lock reads the logs last: when the time runs out there, the citation and placeholder locks
    keep their own findings and the timeout names the log being read, not the manuscript."""
    with open(tmp_path / "log.csv", "w") as out:  # about 100 MB of training rows
        out.write("step,loss,acc\n")
        row = "".join(f"{i},0.{i % 9973:04d},0.{(i * 7) % 9973:04d}\n" for i in range(100_000))
        for _ in range(45):
            out.write(row)
    (tmp_path / "refs.bib").write_text("@misc{a, title={A}}\n")
    root = tmp_path / "main.tex"
    root.write_text("% !patchwrite log = log.csv\n\\documentclass{article}\n\\begin{document}\n"
                    "Acc 0.4242 \\cite{a} \\cite{fake2025}. TODO\n\\bibliography{refs}\n\\end{document}\n")
    report = evaluate(load_manuscript(root), EvidenceConfig(timeout=2.0))
    assert report.timed_out
    assert [v.kind for v in report.numbers or []] == ["timeout"]
    assert "log.csv (" in report.numbers[0].message and "MB)" in report.numbers[0].message
    assert [(v.kind, v.token) for v in report.citations] == [("unknown_cite", "fake2025")]
    assert [(v.kind, v.token) for v in report.placeholders_in(None)] == [("placeholder", "TODO")]


def test_apply_stopped_by_its_timeout_says_so_once_and_keeps_the_file(tmp_path: Path) -> None:
    """The three evidence items each stop with the same `timeout`; `apply` printed that line three times alike."""
    (tmp_path / "results.json").write_text('{"acc": 0.914}\n')
    numbers = " ".join(f"0.{i % 997:03d}" for i in range(300_000))  # one paragraph, 1.8 MB dense with numbers
    root = tmp_path / "main.tex"
    root.write_text("% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\n"
                    f"Accuracy was 0.914.\n{numbers}\n\\end{{document}}\n")  # fmt: skip
    before = root.read_bytes()
    (tmp_path / "edit.txt").write_text("```EDIT 4 4\nThe accuracy was 0.914.\n```\n")
    done = subprocess.run([sys.executable, "-m", "pytest_patchwrite.cli", "apply", "main.tex", "edit.txt",
                           "--no-compile-gate", "--timeout", "1"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "main.tex: rejected at evidence (timeout)", done.stdout
    assert lines[1:] == [
        "main.tex: timeout: the evidence locks did not finish within 1 s and were stopped (a "
        "manuscript this large or this dense with numbers); raise --timeout / patchwrite_timeout"
    ]
    assert root.read_bytes() == before
