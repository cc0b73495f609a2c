"""Group matching answered from one pass: the same answers as scanning from each opener, in linear time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_patchwrite.tex import texgroups
from pytest_patchwrite.tex.latex import scan
from pytest_patchwrite.tex.texmask import command_args

KINDS = (("{", "}"), ("[", "]"), ("(", ")"), ("<", ">"))


@given(st.text(alphabet="{}[]()<>\\ab \n", max_size=60))
def test_one_pass_answers_as_a_scan_from_each_opener(text: str) -> None:
    texgroups._PAIRS.clear()
    for i, ch in enumerate(text):
        for open_ch, close_ch in KINDS:
            if ch == open_ch:
                assert texgroups.match_group(text, i, open_ch, close_ch) == texgroups._scan_group(
                    text, i, open_ch, close_ch
                ), (text, i, open_ch)


def test_thousands_of_unclosed_groups_are_one_pass() -> None:
    # each \footnote{ used to rescan the rest of the file: 30,000 of them never finished
    hostile = "\\footnote{" * 30_000 + "\\footnote[" * 30_000 + " 91.4\\% \\cite{a}"
    found = scan(hostile)
    assert [n.text for n in found.numbers] == ["91.4\\%"] and [c.key for c in found.citations] == ["a"]
    assert command_args(hostile, len("\\footnote")) == []  # unclosed: no argument


def test_escaped_braces_do_not_open_groups() -> None:
    text = r"\textbf{a \{ b} \\{c}"
    assert command_args(text, len("\\textbf")) == [("{", 8, 14)]
    after_linebreak = text.index("\\\\") + 2  # `\\` then `{c}`: the brace is not escaped
    assert command_args(text, after_linebreak) == [("{", after_linebreak + 1, after_linebreak + 2)]
