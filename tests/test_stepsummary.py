"""The Markdown step summary: rendering, and the plugin writing it for real with and without xdist."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.plugin.plugin import NO_LOG
from pytest_patchwrite.plugin.stepsummary import MAX_ROWS, cell, destination, render

EXAMPLES = Path(__file__).parent.parent / "examples"


def violation(line: int, token: str = "x", message: str = "is wrong") -> dict[str, object]:
    return {"kind": "unknown_cite", "file": "/p/sections/a.tex", "line": line, "token": token, "message": message}


def test_cells_render_literally_on_one_line() -> None:
    assert cell("! Missing $ inserted. a|b <b>x</b> \\emph{_y_}\n  next") == (
        "\\! Missing \\$ inserted. a\\|b \\<b\\>x\\</b\\> \\\\emph{\\_y\\_} next"
    )
    assert len(cell("x" * 1000)) == 300


def test_destination_option_rewrites_environment_appends() -> None:
    assert destination("out.md", {"GITHUB_STEP_SUMMARY": "/gh"}) == (Path("out.md"), "w")
    assert destination(None, {"GITHUB_STEP_SUMMARY": "/gh"}) == (Path("/gh"), "a")
    assert destination(None, {"GITHUB_STEP_SUMMARY": ""}) is None
    assert destination(None, {}) is None


def test_render_overview_sections_and_bound() -> None:
    outcomes = {
        "/p/main.tex": {"compile": ("passed", ""), "citations": ("failed", ""), "numbers": ("skipped", "no log")},
        "/p/ok.tex": {"compile": ("passed", ""), "citations": ("passed", ""), "numbers": ("passed", "")},
    }
    many = [violation(i) for i in range(1, MAX_ROWS + 11)]
    verdicts = {"/p/main.tex": {"citations": {"result": {"ok": False, "violations": many}}}}
    text = render(outcomes, verdicts, Path("/p"))
    lines = text.splitlines()
    assert lines[:8] == [
        "## patchwrite",
        "",
        "2 manuscript(s); 4 of 6 item(s) passed.",
        "",
        "| manuscript | compile | citations | numbers |",
        "|---|---|---|---|",
        f"| main.tex | ✅ passed | ❌ failed ({MAX_ROWS + 10}) | ⏭️ skipped |",
        "| ok.tex | ✅ passed | ✅ passed | ✅ passed |",
    ]
    assert "### ok.tex" not in text  # nothing to say about a clean manuscript
    section = lines[lines.index("### main.tex") :]
    assert section[2] == "- numbers skipped: no log"
    assert section[4:7] == [
        "| file:line | item | kind | message |",
        "|---|---|---|---|",
        "| sections/a.tex:1 | citations | unknown\\_cite | x is wrong |",
    ]
    assert sum(line.startswith("| sections/a.tex:") for line in section) == MAX_ROWS
    assert section[-1] == "| … | | | and 10 more violation(s) |"


@pytest.fixture(params=[[], ["-n", "2"]], ids=["serial", "xdist"])
def mode(request: pytest.FixtureRequest) -> list[str]:
    return request.param


@pytest.fixture
def papers(pytester: pytest.Pytester) -> Path:
    require_tool("pdflatex")
    require_tool("bibtex")
    for name in ("paper", "broken-paper"):
        shutil.copytree(EXAMPLES / name, pytester.path / name)
    return pytester.path


def test_summary_file_holds_verdicts_and_located_violations(
    pytester: pytest.Pytester, papers: Path, mode: list[str]
) -> None:
    result = pytester.runpytest_subprocess(*mode, "--patchwrite-summary", "out/summary.md")
    result.assert_outcomes(passed=4, failed=4)
    lines = (papers / "out" / "summary.md").read_text(encoding="utf-8").splitlines()
    assert lines[2:8] == [
        "2 manuscript(s); 4 of 8 item(s) passed.",
        "",
        "| manuscript | compile | citations | numbers | placeholders |",
        "|---|---|---|---|---|",
        "| broken-paper/main.tex | ❌ failed (1) | ❌ failed (1) | ❌ failed (1) | ❌ failed (1) |",
        "| paper/main.tex | ✅ passed | ✅ passed | ✅ passed | ✅ passed |",
    ]
    section = lines[lines.index("### broken-paper/main.tex") :]
    assert section[2:4] == ["| file:line | item | kind | message |", "|---|---|---|---|"]
    rows = section[4:]
    assert rows[0] == (
        "| broken-paper/sections/intro.tex:3 | compile | undefined\\_control\\_sequence "
        "| \\\\emphasize \\! Undefined control sequence. |"
    )
    assert rows[1].startswith("| broken-paper/sections/results.tex:4 | citations | unknown\\_cite | fake2024 ")
    assert rows[2].startswith("| broken-paper/sections/results.tex:3 | numbers | unattested\\_number | 99.9\\\\% ")
    assert rows[3].startswith("| broken-paper/sections/results.tex:5 | placeholders | placeholder | TODO ")
    assert len(rows) == 4
    assert "### paper/main.tex" not in lines


def test_github_step_summary_is_appended_with_skip_reasons(
    pytester: pytest.Pytester, papers: Path, mode: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.rmtree(papers / "broken-paper")
    main = papers / "paper" / "main.tex"
    main.write_text(main.read_text().replace("% !patchwrite log = results.json\n", ""))
    target = papers / "step-summary.md"
    target.write_text("## an earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    pytester.runpytest_subprocess(*mode).assert_outcomes(passed=3, skipped=1)
    text = target.read_text(encoding="utf-8")
    assert text.startswith("## an earlier step\n## patchwrite\n")
    assert "| paper/main.tex | ✅ passed | ✅ passed | ⏭️ skipped | ✅ passed |" in text
    assert f"- numbers skipped: {cell(NO_LOG)}" in text.splitlines()


def test_no_summary_without_manuscripts_or_destination(
    pytester: pytest.Pytester, papers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = papers / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    pytester.runpytest_subprocess("test_plain.py").assert_outcomes(passed=1)
    assert not target.exists()  # a run without manuscripts leaves the run page alone
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    pytester.runpytest_subprocess("paper").assert_outcomes(passed=4)
    written = [p for p in papers.rglob("*.md") if ".pytest_cache" not in p.parts]
    assert written == []  # neither the variable nor the option: no summary anywhere


def test_unwritable_summary_is_a_warning_line_not_a_failure(pytester: pytest.Pytester, papers: Path) -> None:
    (papers / "blocker").write_text("a file, not a directory")
    result = pytester.runpytest_subprocess("paper", "--patchwrite-summary", "blocker/summary.md")
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["patchwrite: could not write the Markdown summary to blocker/summary.md: *"])
    assert "Traceback" not in result.stdout.str()
