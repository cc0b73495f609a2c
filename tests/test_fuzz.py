"""Fuzzing: the edit parser, the transaction, the number scanner, the log and bib loaders.

Every input ends in a verdict or one of our errors: no other exception, the file's bytes
unchanged on every rejection, exactly the applied edit on acceptance.

CI runs a bounded number of examples. A long run:

    PATCHWRITE_FUZZ=long PATCHWRITE_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz.py -p no:randomly -s

prints, per target, how many cases ran and how they ended (`fuzz counts: ...`).
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_patchwrite.edit import REASONS, EditError, apply_edit, count_lines, parse_edit
from pytest_patchwrite.errors import PatchwriteError
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates.evidence import EvidenceConfig, EvidenceGate
from pytest_patchwrite.numbers.logread import load_logs
from pytest_patchwrite.snapshot.bib import load_bibliography
from pytest_patchwrite.tex.latex import scan

LONG = os.environ.get("PATCHWRITE_FUZZ") == "long"
FUZZ = settings(
    max_examples=int(os.environ.get("PATCHWRITE_FUZZ_EXAMPLES", "5000")) if LONG else 60,
    # the long run fails an example that takes 30 s (a hang); CI asserts no timing
    deadline=timedelta(seconds=30) if LONG else None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=not LONG,
    database=None,
)
COUNTS: dict[str, Counter[str]] = {}


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> Iterator[None]:
    yield
    for target, counts in sorted(COUNTS.items()):
        # a crash (any other exception) or a hang (past the deadline) fails the run instead
        print(f"\nfuzz counts: {target}: {dict(sorted(counts.items()))}")


def _count(target: str, outcome: str) -> None:
    COUNTS.setdefault(target, Counter())[outcome] += 1
    COUNTS[target]["cases"] += 1


FRAGMENTS = st.sampled_from(
    [
        "EDIT 2 3",
        "EDIT 1 1",
        "DELETE 2 2",
        "```EDIT 2 2",
        "```DELETE 1 2```",
        "```",
        "```latex",
        "EDIT",
        "EDIT 0 1",
        "EDIT 3 2",
        "EDIT 1 " + "9" * 60,
        "   \t  EDIT 4 4",
        "new text 91.4\\%",
        "",
        "   ",
        "\t",
        "`" * 40,
        " " * 300,
        "Here is my fix:",
        "\\cite{key}",
        "caf\udcc3\udca9",
        "\r",
        "x\x00y",
    ]
)
LINE = st.one_of(FRAGMENTS, st.text(max_size=40))
REPLY = st.lists(LINE, max_size=14).map("\n".join)
HEAD_LINES = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=20),
    min_size=1,
    max_size=8,
)


@FUZZ
@given(reply=REPLY, n_lines=st.integers(min_value=0, max_value=12))
def test_fuzz_edit_parser(reply: str, n_lines: int) -> None:
    try:
        edit = parse_edit(reply, n_lines)
    except EditError as exc:
        assert exc.reason in REASONS
        _count("parser", "rejected")
        return
    assert 1 <= edit.start <= edit.end <= n_lines and edit.verb in ("EDIT", "DELETE")
    _count("parser", "accepted")


class _ForbidWord:
    """A real gate that rejects candidates holding a word, so gate rejections are fuzzed too."""

    stage = "evidence"

    def check(self, text: str, context: object) -> object:
        from pytest_patchwrite.model import GateResult, Violation

        bad = "forbidden" in text
        return GateResult(not bad, [Violation("forbidden", "", 0, "", "no")] if bad else [], "forbid")


@st.composite
def _reply_for(draw: st.DrawFn, n_lines: int) -> str:
    """A reply that is often well-formed for a file of `n_lines` lines, often slightly off."""
    start = draw(st.integers(min_value=0, max_value=n_lines + 1))
    end = draw(st.integers(min_value=start - 1, max_value=n_lines + 2))
    verb = draw(st.sampled_from(["EDIT", "EDIT", "DELETE"]))
    fenced = draw(st.booleans())
    body = draw(st.lists(LINE, max_size=4)) if verb == "EDIT" else []
    before = draw(st.lists(LINE, max_size=3))
    header = f"{'```' if fenced else ''}{verb} {start} {end}"
    closing = ["```"] if fenced and draw(st.integers(0, 9)) else []
    return "\n".join([*before, header, *body, *closing, *draw(st.lists(LINE, max_size=2))])


@FUZZ
@given(
    lines=HEAD_LINES,
    crlf=st.booleans(),
    final_newline=st.booleans(),
    data=st.data(),
    word=st.booleans(),
)
def test_fuzz_transaction(lines: list[str], crlf: bool, final_newline: bool, data: st.DataObject, word: bool) -> None:
    reply = data.draw(st.one_of(REPLY, _reply_for(len(lines))))
    eol = "\r\n" if crlf else "\n"
    head = eol.join(lines) + (eol if final_newline else "")
    if word:
        reply = reply.replace("new text", "forbidden text")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "main.tex"
        path.write_bytes(head.encode("utf-8"))
        before = path.read_bytes()
        result = try_patch(path, reply, [_ForbidWord()])
        after = path.read_bytes()
        leftovers = [p.name for p in Path(tmp).iterdir() if p.name != "main.tex"]
    assert leftovers == []
    if not result.accepted:
        assert after == before
        _count("transaction", f"rejected_{result.stage}")
        return
    expected = apply_edit(head, parse_edit(reply, count_lines(head)))
    assert after == expected.encode("utf-8")
    _count("transaction", "accepted")


NUMBERISH = st.text(alphabet="0123456789.,eE+-\\%{}^ times$x~", max_size=60)
LATEX = st.lists(
    st.one_of(
        NUMBERISH,
        st.sampled_from(
            [r"\cite{a}", r"\SI{3.2e20}{J}", r"$3.8 \times 10^{27}$", "2.5e1000000", r"1e-29697637\%", "% 99.9", "\n"]
        ),
        st.text(max_size=20),
    ),
    max_size=12,
).map("".join)


@FUZZ
@given(text=LATEX)
def test_fuzz_number_scanner(text: str) -> None:
    numbers = scan(text).numbers
    assert all(n.value.is_finite() for n in numbers)
    _count("scanner", "with_numbers" if numbers else "without_numbers")


LOG_TEXT = st.one_of(
    st.text(max_size=200),
    st.lists(st.one_of(NUMBERISH, st.sampled_from(["[", "]", "{", "}", ":", ",", '"a"', "&x", "*x", "\n", "- "]))).map(
        "".join
    ),
)


@FUZZ
@given(suffix=st.sampled_from([".json", ".jsonl", ".yaml", ".toml", ".csv", ".tsv", ".txt"]), text=LOG_TEXT)
def test_fuzz_log_loaders(suffix: str, text: str) -> None:
    if suffix == ".yaml":
        pytest.importorskip("yaml")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / f"log{suffix}").write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            log = load_logs([f"log{suffix}"], Path(tmp))
        except PatchwriteError as exc:
            assert f"log{suffix}" in str(exc)
            _count("logs", "input_error")
            return
    _count("logs", "loaded" if len(log.index) else "loaded_empty")


BIB = st.lists(
    st.one_of(
        st.sampled_from(
            ["@article{", "@string{", "@comment{", "key,", "title = {", "}", "{", '"', "=", ",", "\n", "@"]
        ),
        st.text(max_size=15),
    ),
    max_size=30,
).map("".join)


@FUZZ
@given(text=BIB, key=st.sampled_from(["key", "a", "x"]), defined=st.booleans())
def test_fuzz_bib_loader_and_evidence_gate(text: str, key: str, defined: bool) -> None:
    if defined:
        text = "@misc{key, title={T}}\n" + text
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "refs.bib").write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            bibliography = load_bibliography([directory / "refs.bib"])
        except PatchwriteError:
            _count("bib", "input_error")
            return
        root = directory / "main.tex"
        root.write_text("\\documentclass{article}\n\\begin{document}\nx\n\\bibliography{refs}\n\\end{document}\n")
        before = root.read_bytes()
        result = try_patch(root, f"EDIT 3 3\nSee \\cite{{{key}}}.\n", [EvidenceGate(root, EvidenceConfig())])
        assert result.accepted == (key in bibliography.keys) or result.stage == "evidence"
        assert result.accepted or root.read_bytes() == before
    _count("bib", "accepted" if result.accepted else "rejected")
