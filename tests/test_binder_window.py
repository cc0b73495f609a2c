"""A number's context is read from a window around it, not from its whole sentence: a manuscript of one huge
'sentence' dense with numbers (a megabyte without a full stop) made the binder's per-number work quadratic, and the
MCP `bindings` tool ran for minutes. Each sentence is read once for all its numbers, and each number looks only at
the words within `texcontext.WINDOW` characters of it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_patchwrite.flows.bind import bind_root
from pytest_patchwrite.gates.evidence import EvidenceConfig
from pytest_patchwrite.numbers.binder import occurrences
from pytest_patchwrite.tex import texcontext
from pytest_patchwrite.tex.latex import scan
from pytest_patchwrite.tex.texwords import WINDOW


def one_sentence(size: int) -> str:
    """Return a paragraph of about `size` characters with no full stop: numbers and a few words between them."""
    parts, i = [], 0
    total = 0
    while total < size:
        part = f"trial scored {(i * 37) % 9000 / 100 + 10:.2f} and loss {(i * 53) % 9000 / 1000 + 1:.3f} then"
        parts.append(part)
        total += len(part) + 1
        i += 1
    return " ".join(parts)


def test_a_megabyte_sentence_is_read_once_and_each_number_sees_only_its_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[int] = []

    class Counted(texcontext.Sentence):
        def __init__(self, *args: object) -> None:
            made.append(1)
            super().__init__(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(texcontext, "Sentence", Counted)
    paragraph = one_sentence(1_000_000)
    text = "\\begin{document}\nZephyrmark accuracy reaches 91.43 " + paragraph + " done.\n\\end{document}\n"
    found = occurrences([scan(text, "main.tex")], {Path("main.tex"): text}, "decimals", set())
    assert len(found) > 40_000
    assert len({occ.context.group for occ in found}) == 1  # one sentence
    assert len(made) == 1  # the sentence is read once, not once per number
    marker = text.index("Zephyrmark")
    assert "zephyrmark" in found[0].context.words  # beside it: named
    for occ in found:
        far = occ.number.start - marker > WINDOW + len("Zephyrmark")
        assert far is ("zephyrmark" not in occ.context.words), occ.number.start
        # its identity's words and its own words come from its window too
        assert len(occ.context.words) <= 8


def test_a_number_named_beside_it_in_a_long_sentence_binds_and_one_named_only_far_away_does_not(
    tmp_path: Path,
) -> None:
    filler = one_sentence(40_000)
    body = f"The zephyr accuracy reaches 91.43\\% {filler} and at last, far from any naming word, 0.8642 is printed.\n"
    probes = {f"probe_{i}": round(0.1 + (i * 0.6180339) % 0.89, 4) for i in range(150)}  # a value-only match likely
    log = {"zephyr": {"accuracy": 0.9143, "recall": 0.8642}, "other": probes}
    (tmp_path / "results.json").write_text(json.dumps(log))
    root = tmp_path / "main.tex"
    root.write_text("% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\n"
                    f"{body}\\end{{document}}\n")  # fmt: skip
    result = bind_root(root, EvidenceConfig()).reconciled.result
    bound = {b.occurrence.token: b for b in result.bound}
    assert bound["91.43\\%"].best.entry.at == "zephyr.accuracy"
    assert bound["91.43\\%"].evidence == "name"
    # `zephyr` stands 40,000 characters before 0.8642: outside its window, no evidence for it
    assert "0.8642" not in bound
    assert "0.8642" in {occ.token for occ in result.unattested}
