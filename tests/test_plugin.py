"""The pytest plugin, run for real with pytester, with and without xdist."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.plugin.plugin import NO_LOG

EXAMPLES = Path(__file__).parent.parent / "examples"

pytestmark = pytest.mark.usefixtures("_tex")


@pytest.fixture
def _tex() -> None:
    require_tool("pdflatex")
    require_tool("bibtex")


@pytest.fixture(params=[[], ["-n", "2"]], ids=["serial", "xdist"])
def mode(request: pytest.FixtureRequest) -> list[str]:
    return request.param


def copy_example(pytester: pytest.Pytester, name: str, as_name: str | None = None) -> Path:
    target = pytester.path / (as_name or name)
    shutil.copytree(EXAMPLES / name, target)
    return target


def test_collects_roots_only(pytester: pytest.Pytester) -> None:
    copy_example(pytester, "paper")
    (pytester.path / "notes.tex").write_text("Just a fragment, \\input by nobody.\n")
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    assert ids == [f"paper/main.tex::{name}" for name in ("compile", "citations", "numbers", "placeholders")]


def test_pass_and_fail_with_located_lines(pytester: pytest.Pytester, mode: list[str]) -> None:
    copy_example(pytester, "paper")
    copy_example(pytester, "broken-paper")
    result = pytester.runpytest_subprocess(*mode)
    result.assert_outcomes(passed=4, failed=4)
    for line in [  # one call each: under xdist the failures arrive in any order
        "broken-paper/sections/intro.tex:3: undefined_control_sequence \\emphasize ! Undefined control sequence.",
        "broken-paper/sections/results.tex:4: unknown_cite fake2024 is not defined (bib: refs.bib; 3 keys defined)",
        "broken-paper/sections/results.tex:3: unattested_number 99.9\\% is not attested*",
        "broken-paper/sections/results.tex:5: placeholder TODO*",
    ]:
        result.stdout.fnmatch_lines([line])
    assert "Traceback" not in result.stdout.str()
    assert result.stdout.str().count("manuscripts checked: 2") == 1  # the summary, on the controller only


def test_skip_reason_without_log_and_marker(pytester: pytest.Pytester) -> None:
    paper = copy_example(pytester, "paper")
    main = paper / "main.tex"
    main.write_text(main.read_text().replace("% !patchwrite log = results.json\n", ""))
    result = pytester.runpytest_subprocess("-rs", "-m", "patchwrite")
    result.assert_outcomes(passed=3, skipped=1)
    result.stdout.fnmatch_lines([f"*{NO_LOG}*"])


def test_ini_configuration_and_magic_comment_override(pytester: pytest.Pytester) -> None:
    paper = copy_example(pytester, "paper")
    main = paper / "main.tex"
    main.write_text(main.read_text().replace("% !patchwrite log = results.json\n", ""))
    (pytester.path / "logs").mkdir()
    shutil.move(str(paper / "results.json"), pytester.path / "logs" / "results.json")
    pytester.makeini("[pytest]\npatchwrite_log = logs/results.json\npatchwrite_numbers = all\n")
    result = pytester.runpytest_subprocess()
    # under `all` the integer 3 (seeds) in results.tex is checked: results.json says "seeds": 3, so it passes
    result.assert_outcomes(passed=4)
    results = paper / "sections" / "results.tex"
    results.write_text(results.read_text().replace("over 3 seeds", "over 5 seeds"))
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        ["*results.tex:4: unattested_number 5 is not attested (policy: all; logs: results.json)*"]
    )
    main.write_text("% !patchwrite numbers = decimals\n" + main.read_text())
    pytester.runpytest_subprocess().assert_outcomes(passed=4)


def test_json_report_and_one_compile_per_manuscript(pytester: pytest.Pytester, mode: list[str]) -> None:
    copy_example(pytester, "paper")
    copy_example(pytester, "paper", "paper2")
    result = pytester.runpytest_subprocess(*mode, "--patchwrite-no-cache", "--patchwrite-report", "out/report.json")
    result.assert_outcomes(passed=8)
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    assert [Path(m["path"]).parent.name for m in report["manuscripts"]] == ["paper", "paper2"]
    for entry in report["manuscripts"]:
        assert set(entry["gates"]) == {"compile", "citations", "numbers", "placeholders"}
        assert all(g["ok"] is True and g["violations"] == [] for g in entry["gates"].values())
        assert entry["compiles"] == 1
    result.stdout.fnmatch_lines(["*compiles: 2 (*"])


def test_verdict_cache_makes_a_rerun_a_hit(pytester: pytest.Pytester) -> None:
    copy_example(pytester, "paper")
    pytester.runpytest_subprocess().assert_outcomes(passed=4)
    again = pytester.runpytest_subprocess()
    again.assert_outcomes(passed=4)
    again.stdout.fnmatch_lines(["*verdict cache hits: 1*"])


def test_collection_can_be_switched_off(pytester: pytest.Pytester) -> None:
    copy_example(pytester, "paper")
    pytester.makeini("[pytest]\npatchwrite_collect = false\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_unreadable_manuscript_is_one_failing_item(pytester: pytest.Pytester) -> None:
    (pytester.path / "latin.tex").write_bytes(
        b"\\documentclass{article}\n\\begin{document}\ncaf\xe9\n\\end{document}\n"
    )
    result = pytester.runpytest_subprocess()
    result.stdout.fnmatch_lines(["*patchwrite: latin.tex:3: not valid UTF-8*"])
    assert "Traceback" not in result.stdout.str() and "Interrupted" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)


def test_fixtures_accept_reject_and_preservation(pytester: pytest.Pytester, mode: list[str]) -> None:
    pytester.makeini("[pytest]\npatchwrite_collect = false\n")
    pytester.makepyfile(
        test_agent=f"""
        from pathlib import Path
        import pytest
        from pytest_patchwrite.plugin.fixtures import assert_preserved, EvidenceTokens

        PAPER = Path({str(EXAMPLES / "paper")!r}) / "main.tex"

        def test_accepted(manuscript, try_patch):
            doc = manuscript(PAPER)
            results = doc.directory / "sections" / "results.tex"
            assert doc.numbered("sections/results.tex").splitlines()[3].startswith(" 4 | Table")
            head = results.read_text()
            result = try_patch(results, "```EDIT 4 4\\nTable~\\\\ref{{tab:main}} reports 3 seeds.\\n```")
            assert result.accepted, result.violations
            assert_preserved(head, results.read_text())

        def test_rejected(manuscript, try_patch):
            doc = manuscript(PAPER)
            results = doc.directory / "sections" / "results.tex"
            result = try_patch(results, "```EDIT 3 3\\nAccuracy was 99.9\\\\%~\\\\citep{{lee2019}}.\\n```")
            assert (result.accepted, result.stage, result.reason) == (False, "evidence", "unattested_number:99.9\\\\%")

        def test_moved_numbers_are_shown():
            assert_preserved("The encoder uses 12 layers.", "The encoder uses 16 layers.")

        def test_repr_compare():
            assert EvidenceTokens("uses 12 layers \\\\cite{{a}}") == EvidenceTokens("uses 16 layers \\\\cite{{b}}")

        class Sneaky:
            stage = "evidence"
            def __init__(self, path):
                self.path = path
            def check(self, text, context):
                from pytest_patchwrite.model import GateResult, Violation
                Path(self.path).write_text("clobbered")
                return GateResult(False, [Violation("sneaky", str(self.path), 1, "", "no")])

        def test_broken_invariant_is_caught(manuscript, try_patch):
            doc = manuscript(PAPER)
            try_patch(doc, "```EDIT 1 1\\n% a comment\\n```", gates=[Sneaky(doc.path)])
        """
    )
    result = pytester.runpytest_subprocess(*mode)
    result.assert_outcomes(passed=2, failed=3)
    out = result.stdout.str()
    assert "  - number 12" in out and "  + number 16" in out
    assert "  - cite a" in out and "  + cite b" in out
    assert "HEAD invariant broken: the candidate was rejected at evidence (sneaky)" in out


def test_plugin_gate_through_the_hook(pytester: pytest.Pytester) -> None:
    copy_example(pytester, "paper")
    pytester.makeconftest(
        """
        from pytest_patchwrite.model import GateResult, Violation

        class NoTabs:
            stage = "lint"
            def check(self, text, context):
                bad = [i for i, line in enumerate(text.splitlines(), 1) if "\\t" in line]
                return GateResult(not bad, [Violation("tab", str(context.path), i, "", "tab character") for i in bad])

        def pytest_patchwrite_gates(config):
            return [NoTabs()]
        """
    )
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*paper/main.tex::lint PASSED*"])
    main = pytester.path / "paper" / "main.tex"
    main.write_text(main.read_text().replace("\\maketitle", "\t\\maketitle"))
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*paper/main.tex:13: tab tab character*"])


def _duplicate_entry_paper(pytester: pytest.Pytester) -> None:
    paper = pytester.path / "paper"
    paper.mkdir()
    (paper / "refs.bib").write_text(
        "@book{knuth1984, author = {D. Knuth}, title = {A}, year = {1984}, publisher = {AW}}\n"
        "@book{knuth1984, author = {D. Knuth}, title = {B}, year = {1986}, publisher = {AW}}\n"
    )
    (paper / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\nSee \\cite{knuth1984}.\n"
        "\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n"
    )


def test_warnings_pass_report_and_fail_only_when_asked(pytester: pytest.Pytester, mode: list[str]) -> None:
    _duplicate_entry_paper(pytester)
    result = pytester.runpytest_subprocess(*mode, "--patchwrite-report", "report.json", "-k", "citations")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*paper/refs.bib:2: PatchwriteWarning: *warning: duplicate_entry knuth1984*"])
    result.stdout.fnmatch_lines(["warnings: 1 (PatchwriteWarning; --patchwrite-strict makes them fail)"])
    gates = json.loads((pytester.path / "report.json").read_text())["manuscripts"][0]["gates"]
    assert gates["citations"]["ok"] is True
    assert [(v["kind"], v["severity"]) for v in gates["citations"]["violations"]] == [("duplicate_entry", "warning")]

    for args in (["--patchwrite-strict"], ["-W", "error::pytest_patchwrite.PatchwriteWarning"]):
        strict = pytester.runpytest_subprocess(*mode, *args, "-k", "citations")
        strict.assert_outcomes(failed=1)
        strict.stdout.fnmatch_lines(["*paper/refs.bib:2: warning: duplicate_entry knuth1984*"])
