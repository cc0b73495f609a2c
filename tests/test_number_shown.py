"""What `number`, `propose` and `inject` print from a manuscript is escaped; the proposer's view stays faithful."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite import shown
from pytest_patchwrite.edit import number_lines
from pytest_patchwrite.proposers import ProposalRequest

# ESC[2J (clear the screen), a lone CR, a workflow command at line start, tabs, a BEL, a C1 CSI (U+009B)
HOSTILE = (
    "\\documentclass{article}\n"
    "\x1b[2J cleared\n"
    "end\rback\n"
    "::stop-commands::x\n"
    "\tindented\tcell\n"
    "bell\x07 and csi\x9b31m\n"
    "\\begin{document}Hi\\end{document}\n"
)
RAW_CONTROLS = ("\x1b", "\r", "\x07", "\x9b")


def cli(*args: str, cwd: Path | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    # the worktree's package, not the installed one
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "main.tex"
    path.write_bytes(HOSTILE.encode())
    return path


def printed_lines(out: str) -> list[str]:
    return out.split("\n")


def test_number_prints_escapes_keeps_tabs_and_notes_the_lines(hostile: Path) -> None:
    done = cli("number", str(hostile))
    assert done.returncode == 0, done.stderr
    assert not any(ch in done.stdout for ch in RAW_CONTROLS)
    assert not any(line.lstrip().startswith("::") for line in printed_lines(done.stdout))
    assert done.stdout.splitlines() == [
        "1 | \\documentclass{article}",
        "2 | \\x1b[2J cleared",
        "3 | end\\rback",
        "4 | ::stop-commands::x",  # the prefix starts the line with a digit: never a workflow command
        "5 | \tindented\tcell",
        "6 | bell\\x07 and csi\\x9b31m",
        "7 | \\begin{document}Hi\\end{document}",
    ]
    note = done.stderr.strip()
    assert "\n" not in note and not any(ch in note for ch in RAW_CONTROLS)
    assert "line 2 (\\x1b); line 3 (\\r); line 6 (\\x07, \\x9b)" in note
    assert "line 4" not in note and "line 5" not in note  # `::` and tabs are printed as they are


def test_a_clean_file_gets_no_note(tmp_path: Path) -> None:
    path = tmp_path / "clean.tex"
    path.write_text("a\tb\r\nc\r\n")  # CRLF terminators are no line's characters
    done = cli("number", str(path))
    assert (done.returncode, done.stdout, done.stderr) == (0, "1 | a\tb\n2 | c\n", "")


def test_the_proposer_view_is_faithful_and_the_listing_is_its_escaped_print(hostile: Path) -> None:
    request = ProposalRequest.for_text(HOSTILE, "", "a note")
    assert "2 | \x1b[2J cleared\n" in request.numbered and "5 | \tindented\tcell\n" in request.numbered
    assert "3 | end\rback\n" in request.numbered  # a lone CR is the line's, only CRLF terminators go
    assert cli("number", str(hostile)).stdout == shown.listing(number_lines(HOSTILE)) != request.numbered


def test_a_line_copied_from_the_listing_round_trips_its_tabs(hostile: Path, tmp_path: Path) -> None:
    line5 = cli("number", str(hostile)).stdout.splitlines()[4].split(" | ", 1)[1]
    reply = tmp_path / "edit.txt"
    reply.write_text(f"```EDIT 5 5\n{line5}\n```\n")
    done = cli("apply", str(hostile), str(reply), "--no-compile-gate", "--no-evidence-gate")
    assert done.returncode == 0, done.stdout + done.stderr
    assert hostile.read_bytes() == HOSTILE.encode()  # the same bytes: the tabs were real tabs


def test_an_escape_typed_back_is_text_not_the_character(hostile: Path, tmp_path: Path) -> None:
    line2 = cli("number", str(hostile)).stdout.splitlines()[1].split(" | ", 1)[1]
    reply = tmp_path / "edit.txt"
    reply.write_text(f"```EDIT 2 2\n{line2}\n```\n")
    assert cli("apply", str(hostile), str(reply), "--no-compile-gate", "--no-evidence-gate").returncode == 0
    assert hostile.read_text().splitlines()[1] == "\\x1b[2J cleared"  # four characters, as the note warns


def test_inject_prints_the_broken_text_escaped_and_writes_it_exactly(tmp_path: Path) -> None:
    require_tool("pdflatex")
    path = tmp_path / "inj.tex"
    path.write_text("\\documentclass{article}\n% \x1b[2J clear \x07\n\\begin{document}\n\\section{Intro}\n"
                    "We report results here.\n\\section{More}\nMore text.\n\\end{document}\n")  # fmt: skip
    done = cli("inject", str(path), "--fault", "todo")
    assert done.returncode == 0, done.stderr
    assert "% \\x1b[2J clear \\x07\n" in done.stdout and "\x1b" not in done.stdout + done.stderr
    assert "(\\x1b, \\x07); -o FILE writes it as it is" in done.stderr
    out = tmp_path / "broken.tex"
    assert cli("inject", str(path), "--fault", "todo", "-o", str(out)).returncode == 0
    assert "% \x1b[2J clear \x07\n" in out.read_text() and "TODO" in out.read_text()


def test_the_mcp_view_numbers_lines_as_the_edit_grammar_does(tmp_path: Path) -> None:
    from pytest_patchwrite.mcpserver.workspace import Workspace

    # a lone CR, U+2028 and NEL (U+0085) are characters of their line, not line breaks (str.splitlines breaks there)
    text = HOSTILE + "c\u2028d\ne\x85f\n"
    (tmp_path / "main.tex").write_bytes(text.encode())
    result = Workspace(tmp_path).read_numbered("main.tex")
    assert result["total_lines"] == 9 and result["text"] == number_lines(text)  # faithful, as JSON carries it
