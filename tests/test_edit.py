"""The EDIT grammar: every reason code, byte-exact application, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_patchwrite.edit import Edit, EditError, apply_edit, count_lines, number_lines, parse_edit, split_lines

TEN = "".join(f"line {i}\n" for i in range(1, 11))


@pytest.mark.parametrize(
    ("edit_text", "reason"),
    [
        ("I think line 3 is wrong.", "no_edit"),
        ("", "no_edit"),
        ("EDIT: fixed it", "no_edit"),
        ("```EDIT 1 1\na\n```\n```EDIT 2 2\nb\n```", "multiple_edits"),
        ("EDIT 1 1\na\nDELETE 2 2", "multiple_edits"),
        ("```EDIT a b\nx\n```", "bad_range"),
        ("```EDIT 1.5 2\nx\n```", "bad_range"),
        ("```EDIT 3\nx\n```", "bad_range"),
        ("```EDIT 1 2 3\nx\n```", "bad_range"),
        ("```EDIT 0 0\nx\n```", "bad_range"),
        ("```EDIT -2 3\nx\n```", "bad_range"),
        ("```EDIT 5 4\nx\n```", "bad_range"),
        ("```EDIT 10 11\nx\n```", "past_eof"),
        ("DELETE 11 11", "past_eof"),
        ("```EDIT 1 99999999999999999999\nx\n```", "past_eof"),
        ("```EDIT 1 10\nx\n```", None),
        ("```EDIT 1 10\n\n```", "empty_replacement"),
        ("```EDIT 4 4\n```", "empty_replacement"),
        ("EDIT 4 4\n   \n\n", "empty_replacement"),
        ("```EDIT 4 4\nnew text\n", "unclosed_fence"),
        ("```DELETE 2 3\nnot empty\n```", "bad_range"),
        ("DELETE 4 4\nextra body\n", "bad_range"),
        ("DELETE 4 4\n\nThis removes the repeated sentence.", "bad_range"),
        ("EDIT \u0664 \u0664\nx\n", "bad_range"),
        ("EDIT +4 4\nx\n", "bad_range"),
        ("EDIT \uff14 4\nx\n", "bad_range"),
        ("EDIT 4 4\nnew text\n```\n\nThat rewords it.", "fence_in_body"),
        ("EDIT 4 4\nnew text\n   ```latex\nmore\n", "fence_in_body"),
        ("EDIT 4 4\n```latex\nnew text\n", "unclosed_fence"),
        ("```EDIT 4 4\n```EDIT 5 5\nnested\n```", "multiple_edits"),
        ("```latex\nEDIT 4 4\nx\n```DELETE 5 5```\n```", "multiple_edits"),
        ("EDIT 4 4\n```\nx\n```EDIT 5 5\ny\n```", "multiple_edits"),
        ("EDIT 4 4\n```latex\nx\n```\nEDIT 5 5\ny\n", "multiple_edits"),
    ],
)
def test_reason_codes(edit_text: str, reason: str | None) -> None:
    if reason is None:
        assert parse_edit(edit_text, 10).span == 10
        return
    with pytest.raises(EditError) as info:
        parse_edit(edit_text, 10)
    assert info.value.reason == reason


@pytest.mark.parametrize("info", ["latex", "tex", "", "LaTeX"])
@pytest.mark.parametrize("gap", ["", "\n", "\n  \n"])
def test_a_bare_header_followed_by_a_fence_is_the_fenced_form(info: str, gap: str) -> None:
    # a chatty model's usual answer: the fence markers and the closing remark must never reach the file
    body = "Table~\\ref{tab:main} lists it.\n\\emph{x}\n"
    reply = f"Here is my edit.\n\nEDIT 4 4\n{gap}```{info}\n{body}```\n\nThis rewords line 4.\n"
    assert parse_edit(reply, 10) == Edit(4, 4, ("Table~\\ref{tab:main} lists it.", "\\emph{x}"))


def test_fence_in_body_says_what_to_do() -> None:
    with pytest.raises(EditError) as info:
        parse_edit("EDIT 4 4\nnew text\n```\nbye\n", 10)
    assert info.value.reason == "fence_in_body"
    assert "reply line 3" in info.value.message and "```EDIT 4 4" in info.value.message


def test_a_bare_delete_followed_by_text_never_drops_it_silently() -> None:
    with pytest.raises(EditError) as info:
        parse_edit("DELETE 4 4\nextra body\n", 10)
    assert "EDIT 4 4" in info.value.message
    assert parse_edit("Remove the repeat.\nDELETE 4 4\n\n  \n", 10) == Edit(4, 4, (), "DELETE")


def test_header_numbers_are_ascii_digits_leading_zeros_allowed() -> None:
    assert parse_edit("EDIT 04 004\nx\n", 10) == Edit(4, 4, ("x",))
    with pytest.raises(EditError) as info:
        parse_edit("```EDIT \u0664 4\nx\n```", 10)
    assert info.value.reason == "bad_range"


def test_one_leading_byte_order_mark_is_stripped() -> None:
    assert parse_edit("\ufeffEDIT 4 4\nx\n", 10) == Edit(4, 4, ("x",))
    assert parse_edit("\ufeff```EDIT 4 4\r\nx\r\n```\r\n", 10) == Edit(4, 4, ("x",))
    # only the leading one: a BOM inside the body is the body's
    assert parse_edit("\ufeffEDIT 4 4\n\ufeffx\n", 10).body == ("\ufeffx",)


def test_span_too_long_respects_max_span() -> None:
    many = "".join(f"l{i}\n" for i in range(100))
    with pytest.raises(EditError) as info:
        parse_edit("```EDIT 1 41\nx\n```", count_lines(many))
    assert info.value.reason == "span_too_long"
    assert "at most 40" in info.value.message
    assert parse_edit("```EDIT 1 41\nx\n```", 100, max_span=41).span == 41
    with pytest.raises(EditError) as info:
        parse_edit("DELETE 1 3", 100, max_span=2)
    assert info.value.reason == "span_too_long"


def test_empty_replacement_points_to_delete() -> None:
    with pytest.raises(EditError) as info:
        parse_edit("```EDIT 3 4\n```", 10)
    assert "DELETE 3 4" in info.value.message


def test_header_lines_inside_a_fence_are_body() -> None:
    edit = parse_edit("```EDIT 2 2\nEDIT 9 9\nDELETE\n```", 10)
    assert edit.body == ("EDIT 9 9", "DELETE")


def test_forms_and_commentary() -> None:
    fenced = parse_edit("Here is my fix:\n```EDIT 2 3\nA\n  B\n```\nThat should do.", 10)
    assert fenced == Edit(2, 3, ("A", "  B"))
    bare = parse_edit("EDIT 2 2\nA\nB\n\n", 10)
    assert bare == Edit(2, 2, ("A", "B"))
    split_fence = parse_edit("```latex\nEDIT 4 4\nX\n```\nbye", 10)
    assert split_fence == Edit(4, 4, ("X",))
    crlf = parse_edit("```EDIT 1 1\r\nA\r\n```\r\n", 10)
    assert crlf.body == ("A",)
    assert parse_edit("DELETE 3 5", 10) == Edit(3, 5, (), "DELETE")
    assert parse_edit("```DELETE 3 5```", 10) == Edit(3, 5, (), "DELETE")
    assert parse_edit("```\nDELETE 3 5\n```", 10) == Edit(3, 5, (), "DELETE")


def test_apply_replaces_only_interval() -> None:
    out = apply_edit(TEN, Edit(3, 4, ("three", "four", "four and a half")))
    assert out.splitlines()[1:6] == ["line 2", "three", "four", "four and a half", "line 5"]
    assert count_lines(out) == 11


def test_apply_keeps_crlf_and_missing_final_newline() -> None:
    text = "a\r\nb\r\nc"
    assert apply_edit(text, Edit(3, 3, ("C", "D"))) == "a\r\nb\r\nC\r\nD"
    assert apply_edit(text, Edit(1, 1, ("A",))) == "A\r\nb\r\nc"
    assert apply_edit(text, Edit(2, 3, (), "DELETE")) == "a"
    assert apply_edit("a\nb\n", Edit(2, 2, (), "DELETE")) == "a\n"
    assert apply_edit("only", Edit(1, 1, (), "DELETE")) == ""


def test_apply_rejects_ranges_past_the_text() -> None:
    with pytest.raises(EditError) as info:
        apply_edit("a\n", Edit(1, 2, ("x",)))
    assert info.value.reason == "past_eof"


def test_number_lines() -> None:
    text = "".join(f"x{i}\n" for i in range(1, 12))
    view = number_lines(text).splitlines()
    assert view[0] == " 1 | x1"
    assert view[10] == "11 | x11"
    assert number_lines("a\r\nb") == "1 | a\n2 | b\n"
    assert number_lines("") == ""


# -- properties ---------------------------------------------------------------

# a last line that is empty and unterminated is no line at all, so generated lines are never empty
_line = st.text(
    alphabet=st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), min_size=1, max_size=12
)


@st.composite
def texts_and_edits(draw: st.DrawFn) -> tuple[str, Edit]:
    lines = draw(st.lists(_line, min_size=1, max_size=30))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    final = draw(st.booleans())
    text = eol.join(lines) + (eol if final else "")
    n = count_lines(text)
    if n == 0:
        text, n = "x" + eol, 1
    start = draw(st.integers(1, n))
    end = draw(st.integers(start, min(n, start + 39)))
    # a body of blanks only is `empty_replacement` by design, so the generator draws a real one
    body = tuple(draw(st.lists(_line, min_size=1, max_size=5).filter(lambda b: any(x.strip() for x in b))))
    return text, Edit(start, end, body)


@given(texts_and_edits())
def test_property_apply_touches_only_the_interval(case: tuple[str, Edit]) -> None:
    text, edit = case
    before = split_lines(text)
    after = split_lines(apply_edit(text, edit))
    assert after[: edit.start - 1] == before[: edit.start - 1]
    tail = len(before) - edit.end
    assert after[len(after) - tail :] == before[edit.end :] if tail else True
    assert len(after) == len(before) - edit.span + len(edit.body)
    # the file's final newline (or its absence) survives
    assert after[-1].endswith("\n") == before[-1].endswith("\n")


@given(texts_and_edits())
def test_property_delete_then_reinsert_round_trips(case: tuple[str, Edit]) -> None:
    text, edit = case
    lines = split_lines(text)
    old = tuple(line.rstrip("\n").rstrip("\r") for line in lines[edit.start - 1 : edit.end])
    deleted = apply_edit(text, Edit(edit.start, edit.end, (), "DELETE"))
    if "\r\n" in text and "\n" not in deleted:
        return  # one unterminated line left: no line ending remains to say the file was CRLF
    if edit.start > 1:
        anchor = lines[edit.start - 2].rstrip("\n").rstrip("\r")
        restored = apply_edit(deleted, Edit(edit.start - 1, edit.start - 1, (anchor, *old)))
    elif edit.end < len(lines):
        anchor = lines[edit.end].rstrip("\n").rstrip("\r")
        restored = apply_edit(deleted, Edit(1, 1, (*old, anchor)))
    else:
        return  # the whole file was deleted: nothing left to anchor a re-insert on
    assert restored.encode() == text.encode()


@given(texts_and_edits())
def test_property_rendered_edit_parses_back(case: tuple[str, Edit]) -> None:
    text, edit = case
    # header-like lines (EDIT 3 4) are fine inside a fence; only a bare fence line would close it
    if not any(b.strip() for b in edit.body) or any(b.strip().startswith("```") for b in edit.body):
        return
    assert parse_edit(edit.render(), count_lines(text)) == edit


def test_prose_in_a_closed_fence_before_a_bare_header_is_skipped() -> None:
    reply = "My reasoning:\n```\nLine 5 says EDIT 9 9 is wrong\nEDIT 9 9\n```\nEDIT 5 5\nfixed line\n"
    assert parse_edit(reply, 10) == Edit(5, 5, ("fixed line",))
    quoted = "```latex\n\\section{Old}\n```\n```EDIT 2 2\nnew\n```\n"
    assert parse_edit(quoted, 10) == Edit(2, 2, ("new",))
    with pytest.raises(EditError) as info:
        parse_edit("```\nprose\n```\nno header here", 10)
    assert info.value.reason == "no_edit"


def test_an_unclosed_non_edit_fence_hides_nothing() -> None:
    assert parse_edit("```\nprose\nEDIT 3 3\nx\n", 10).body == ("x",)


def test_header_numbers_of_any_length_are_reasons_not_crashes() -> None:
    for text, reason in [
        (f"EDIT 1 {'9' * 5000}\nx\n", "past_eof"),
        (f"EDIT {'9' * 5000} {'9' * 5001}\nx\n", "past_eof"),
        (f"EDIT -{'9' * 5000} 1\nx\n", "bad_range"),
        ("EDIT 0000000000000000000000003 3\nx\n", None),
    ]:
        if reason is None:
            assert parse_edit(text, 10) == Edit(3, 3, ("x",))
            continue
        with pytest.raises(EditError) as info:
            parse_edit(text, 10)
        assert info.value.reason == reason and len(info.value.message) < 200


def test_edit_objects_from_the_api_are_checked() -> None:
    for edit, reason in [
        (Edit(1, 1, ()), "empty_replacement"),
        (Edit(2, 1, ("x",)), "bad_range"),
        (Edit(1, 1, ("ok\ud800",)), "invalid_text"),
        (Edit(1, 1, ("x",), "REPLACE"), "no_edit"),
        (Edit(1, 1, ("x",), "DELETE"), "bad_range"),
    ]:
        with pytest.raises(EditError) as info:
            apply_edit(TEN, edit)
        assert info.value.reason == reason


def test_a_lone_surrogate_in_a_reply_body_is_rejected_at_parse() -> None:
    reply = b"EDIT 2 2\nbad \xff byte\n".decode("utf-8", "surrogateescape")
    with pytest.raises(EditError) as info:
        parse_edit(reply, 10)
    assert info.value.reason == "invalid_text" and "U+DCFF" in info.value.message
    # commentary outside the body is never written, so it may hold anything
    assert parse_edit("note \udcff\nEDIT 2 2\nfine\n", 10).body == ("fine",)


@pytest.mark.parametrize(
    ("filler", "reason"), [(" ", None), ("\t", None), ("`", "empty_replacement"), (" `", "bad_range")]
)
def test_ten_megabyte_lines_parse(filler: str, reason: str | None) -> None:
    # the old header regex backtracked quadratically over runs of these characters
    line = filler * (10 * 1024 * 1024 // len(filler))
    with pytest.raises(EditError) as info:
        parse_edit(line + "x\n", 10)
    assert info.value.reason == "no_edit"
    header = f"```EDIT 1 1{line}\nbody\n```\n"
    if reason:
        with pytest.raises(EditError) as info:
            parse_edit(header, 10)
        assert info.value.reason == reason
    else:
        assert parse_edit(header, 10).body == ("body",)
