"""The one text-hash rule (`inputs.text_bytes`, `inputs.text_digest`): a text with undecodable bytes or lone
surrogates hashes the same way every time, and no step of a check raises on it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pytest_patchwrite import cli
from pytest_patchwrite.files.inputs import text_bytes, text_digest
from pytest_patchwrite.flows.transaction import revision_of
from pytest_patchwrite.gates import verdicts
from pytest_patchwrite.gates.compile import CompileGate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

DOC = "\\documentclass{article}\n\\begin{document}\n\\input{body}\n\\end{document}\n"
RAW = b"Caf\xe9 au lait \xff\xfe.\n"  # Latin-1 bytes: not UTF-8
ESCAPED = RAW.decode("utf-8", "surrogateescape")  # what `apply` and a subprocess's output make of them


def test_a_text_stands_for_its_bytes() -> None:
    assert text_bytes("naïve café") == "naïve café".encode()
    assert text_bytes(ESCAPED) == RAW  # the bytes surrogateescape kept come back as they were
    assert text_digest(ESCAPED) == hashlib.sha256(RAW).digest()
    lone = "x\ud800y"  # a JSON string can carry one (an MCP client's edit)
    assert text_bytes(lone) == b"x\xed\xa0\x80y" and text_digest(lone) == text_digest(lone)


@pytest.mark.parametrize("text", [ESCAPED, "lone \ud800 high and \udfff low\n", "plain\n"])
def test_a_snapshot_of_such_a_text_hashes_deterministically(tmp_path: Path, text: str) -> None:
    root = tmp_path / "main.tex"
    root.write_text(DOC, encoding="utf-8")
    (tmp_path / "body.tex").write_text("Old.\n", encoding="utf-8")
    body = (tmp_path / "body.tex").resolve()
    first = load_manuscript(root, {body: text})
    again = load_manuscript(root).derive({body: text})
    assert first.digests[body] == again.digests[body] == text_digest(text)
    assert first.held_bytes()[body] == text_bytes(text)
    sources = verdicts.source_digests({}, first.supplied, root.resolve())
    assert sources == {"body.tex": text_digest(text)}
    assert revision_of(text) == text_digest(text).hex()


def test_the_compile_of_a_supplied_text_with_undecodable_bytes_is_a_verdict(tmp_path: Path) -> None:
    """The sandbox copy writes the bytes the text stands for; the engine judges them (no UnicodeEncodeError)."""
    root = tmp_path / "main.tex"
    root.write_text(DOC, encoding="utf-8")
    (tmp_path / "body.tex").write_text("Old.\n", encoding="utf-8")
    gate = CompileGate(use_cache=False, warm_starts=False)
    report = gate.compile(root, {(tmp_path / "body.tex").resolve(): ESCAPED})
    again = gate.compile(root, {(tmp_path / "body.tex").resolve(): ESCAPED})
    assert report.ok == again.ok and gate.last_key  # a verdict, the same one twice


def test_a_manuscript_with_invalid_utf8_on_disk_is_one_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "main.tex"
    root.write_text(DOC, encoding="utf-8")
    (tmp_path / "body.tex").write_bytes(b"Line one.\n" + RAW)
    assert cli.main(["check", str(root)]) == 2
    err = capsys.readouterr().err
    assert "body.tex:2: not valid UTF-8 (byte 0xe9)" in err and "Traceback" not in err
