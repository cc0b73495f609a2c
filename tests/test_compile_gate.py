"""The compile gate on a corpus of real documents, run by the real engine."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support import require_ctex, require_tool

from pytest_patchwrite.engine.biblog import parse_blg
from pytest_patchwrite.engine.texlog import parse_tex_log
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates.compile import CompileGate
from pytest_patchwrite.model import PatchContext

CORPUS = Path(__file__).parent / "tex"
EXAMPLE = Path(__file__).parent.parent / "examples" / "paper"
_EXPECT = re.compile(r"^% expect (?P<kind>\w+) (?P<line>\d+)(?: (?P<token>\S+))?")


def _docs(prefix: str) -> list[Path]:
    return sorted(CORPUS.glob(f"{prefix}-*.tex"))


@pytest.fixture
def sandboxed(tmp_path: Path):
    """Copy one corpus document into its own directory (the gate copies that directory)."""

    def copy(doc: Path) -> Path:
        target = tmp_path / doc.stem / doc.name
        target.parent.mkdir()
        shutil.copyfile(doc, target)
        return target

    return copy


@pytest.mark.parametrize("doc", _docs("fail"), ids=lambda p: p.stem)
def test_failing_documents_are_rejected_at_their_line(doc: Path, sandboxed) -> None:
    require_tool("pdflatex")
    expect = _EXPECT.match(doc.read_text())
    assert expect, f"{doc.name} lacks its `% expect kind line` header"
    path = sandboxed(doc)
    report = CompileGate(use_cache=False, timeout=30).compile(path)
    assert not report.ok
    first = report.violations[0]
    assert (first.kind, first.line) == (expect.group("kind"), int(expect.group("line"))), report.violations
    assert first.file == str(path.resolve())
    if expect.group("token"):
        assert first.token == expect.group("token")


@pytest.mark.parametrize("doc", _docs("pass"), ids=lambda p: p.stem)
def test_passing_documents_pass(doc: Path, sandboxed) -> None:
    require_tool("pdflatex")
    path = sandboxed(doc)
    report = CompileGate(use_cache=False).compile(path)
    assert report.ok, report.violations
    assert report.pdf_bytes > 64
    assert report.violations == []


def test_warnings_are_kept_but_do_not_fail(sandboxed) -> None:
    require_tool("pdflatex")
    report = CompileGate(use_cache=False).compile(sandboxed(CORPUS / "pass-warnings-only.tex"))
    assert report.ok
    assert [m.token for m in report.warnings("undefined_reference")] == ["sec:missing"]


def test_shell_escape_and_outside_writes_do_nothing(sandboxed, tmp_path: Path) -> None:
    require_tool("pdflatex")
    path = sandboxed(CORPUS / "pass-write18-ignored.tex")
    assert CompileGate(use_cache=False).compile(path).ok
    assert not list(tmp_path.rglob("patchwrite-shell-escape-ran"))
    assert not Path("patchwrite-shell-escape-ran").exists()
    assert not CompileGate(use_cache=False).compile(sandboxed(CORPUS / "fail-write-outside.tex")).ok
    assert not Path("/tmp/patchwrite-escape-test.txt").exists()


def test_symlink_out_of_the_manuscript_is_not_followed(tmp_path: Path) -> None:
    require_tool("pdflatex")
    (tmp_path / "paper").mkdir()
    (tmp_path / "secret.txt").write_text("TOP-SECRET\n")
    (tmp_path / "paper" / "notes.tex").symlink_to(tmp_path / "secret.txt")
    root = tmp_path / "paper" / "main.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\n\\input{notes}\n\\end{document}\n")
    report = CompileGate(use_cache=False).compile(root)
    assert not report.ok
    assert report.violations[0].kind == "missing_file"


def test_endless_loop_is_killed_quickly_with_no_process_left(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "loop.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\n\\def\\loopx{\\loopx}\\loopx\n\\end{document}\n")
    started = time.monotonic()
    report = CompileGate(use_cache=False, timeout=2).compile(root)
    assert time.monotonic() - started < 20
    assert report.timed_out and not report.ok
    assert report.violations[0].kind == "timeout"
    left = subprocess.run(["pgrep", "-f", "loop.tex"], capture_output=True, text=True).stdout.split()
    assert left == []


def test_example_paper_with_bibtex_and_located_error_in_an_input(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    paper = tmp_path / "paper"
    shutil.copytree(EXAMPLE, paper)
    report = CompileGate(use_cache=False).compile(paper / "main.tex")
    assert report.ok and report.runs == 3 and report.warnings("undefined_citation") == []
    results = paper / "sections" / "results.tex"
    before = results.read_bytes()
    gate = CompileGate(paper / "main.tex", use_cache=False)
    outcome = try_patch(results, "```EDIT 4 4\nTable~\\ref{tab:main} \\lists the study.\n```", [gate])
    assert not outcome.accepted and outcome.stage == "compile"
    v = outcome.violations[0]
    assert (v.kind, Path(v.file), v.line, v.token) == ("undefined_control_sequence", results.resolve(), 4, "\\lists")
    assert results.read_bytes() == before


@pytest.mark.parametrize("package", ["natbib", "biblatex"])
def test_bibliographies_with_and_without_a_missing_key(tmp_path: Path, package: str) -> None:
    require_tool("pdflatex")
    require_tool("biber" if package == "biblatex" else "bibtex")
    shutil.copyfile(EXAMPLE / "refs.bib", tmp_path / "refs.bib")
    if package == "natbib":
        head = "\\documentclass{article}\n\\usepackage{natbib}\n\\begin{document}\n"
        tail = "\\bibliographystyle{plainnat}\n\\bibliography{refs}\n\\end{document}\n"
        cite = "\\citep"
    else:
        head = (
            "\\documentclass{article}\n\\usepackage[backend=biber]{biblatex}\n"
            "\\addbibresource{refs.bib}\n\\begin{document}\n"
        )
        tail = "\\printbibliography\n\\end{document}\n"
        cite = "\\parencite"
    good = tmp_path / "good.tex"
    good.write_text(f"{head}Known {cite}{{smith2020}}.\n{tail}")
    bad = tmp_path / "bad.tex"
    bad.write_text(f"{head}Known {cite}{{smith2020}}.\nUnknown {cite}{{ghost2024}}.\n{tail}")
    gate = CompileGate(use_cache=False)
    ok = gate.compile(good)
    assert ok.ok and ok.warnings("undefined_citation") == []
    missing = gate.compile(bad)
    assert missing.ok  # an undefined citation fails the citations item, not the compile item
    undefined = missing.warnings("undefined_citation")
    assert {m.token for m in undefined} == {"ghost2024"}
    assert any(m.line == (5 if package == "natbib" else 6) for m in undefined)


def test_bib_syntax_error_is_located_in_the_bib(tmp_path: Path) -> None:
    require_tool("bibtex")
    (tmp_path / "refs.bib").write_text("@article{a,\n  title = {A},\n  year = 2020\n  author = {B}\n}\n")
    root = tmp_path / "main.tex"
    root.write_text(
        "\\documentclass{article}\n\\begin{document}\n\\cite{a}\n\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n"
    )
    report = CompileGate(use_cache=False).compile(root)
    assert not report.ok
    v = report.violations[0]
    assert (v.kind, Path(v.file).name, v.line) == ("bib_syntax", "refs.bib", 4)


def _compile_body(root: Path, body: str):
    """Return the report of compiling an article whose document body (from line 3) is `body`."""
    root.write_text(f"\\documentclass{{article}}\n\\begin{{document}}\n{body}\\end{{document}}\n")
    return CompileGate(use_cache=False).compile(root)


def test_a_missing_bib_is_one_missing_file_at_the_roots_line(tmp_path: Path) -> None:
    """bibtex names the .aux line of the sandbox's job file too; that is the same fault, never `patchwrite.aux`."""
    require_tool("bibtex")
    report = _compile_body(tmp_path / "main.tex", "\\cite{a}\n\\bibliographystyle{plain}\n\\bibliography{refs}\n")
    assert [(v.kind, Path(v.file).name, v.line, v.token) for v in report.violations] == [
        ("missing_file", "main.tex", 5, "refs.bib")
    ]


def test_a_bibtex_error_in_the_job_aux_is_located_at_the_root(tmp_path: Path) -> None:
    require_tool("bibtex")
    (tmp_path / "refs.bib").write_text("@article{a,\n  title = {A},\n  year = 2020,\n  author = {B}\n}\n")
    body = "\\cite{a}\n\\bibliographystyle{plain}\n\\bibliographystyle{alpha}\n\\bibliography{refs}\n"
    report = _compile_body(tmp_path / "main.tex", body)
    assert report.violations, "bibtex refuses a second \\bibstyle"
    assert all(Path(v.file).name == "main.tex" for v in report.violations), report.violations
    # at the line that wrote the refused entry, never at a line 0 no editor opens
    assert [(v.kind, v.line, v.token) for v in report.violations] == [("bib_syntax", 5, "alpha")]
    assert "The top-level auxiliary file" not in report.violations[0].message


def test_a_cite_key_bibtex_refuses_is_located_at_its_line_in_an_input(tmp_path: Path) -> None:
    require_tool("bibtex")
    (tmp_path / "refs.bib").write_text("@misc{real2020, title = {T}, year = {2020}}\n")
    (tmp_path / "intro.tex").write_text("Intro.\nAs \\cite{real2020,\n::stop-commands::X\n} shows.\n")
    report = _compile_body(tmp_path / "main.tex", "\\input{intro}\n\\bibliographystyle{plain}\n\\bibliography{refs}\n")
    # bibtex: `White space in argument---line 3 of file patchwrite.aux`, the key holding a newline
    assert [(v.kind, Path(v.file).name, v.line, v.token) for v in report.violations] == [
        ("bib_syntax", "intro.tex", 3, "::stop-commands::X")
    ]


def test_a_bgroup_never_closed_is_a_warning_but_a_stray_brace_fails(tmp_path: Path) -> None:
    """The ICLR 2026 template opens `\\bgroup` in its notation section and never closes it; its PDF is complete."""
    require_tool("pdflatex")
    root = tmp_path / "main.tex"
    body = "\\section{A}\\label{s}See~\\ref{s}.\n\\bgroup\n\\def\\arraystretch{1.5}\n"
    body += "\\begin{tabular}{ll} a & b \\end{tabular}\n"
    report = _compile_body(root, body)
    assert report.ok, report.violations
    assert [(v.kind, v.line, v.severity) for v in report.violations] == [("unclosed_group", 4, "warning")]
    assert report.runs > 1 and report.warnings("undefined_reference") == []  # it stops no rerun
    root.write_text(root.read_text().replace("\\bgroup", "{Notation"))
    report = CompileGate(use_cache=False).compile(root)
    assert not report.ok and [(v.kind, v.line, v.severity) for v in report.violations] == [
        ("unclosed_group", 4, "error")
    ]


def test_ctexart_compiles_under_xelatex_chosen_by_the_document(tmp_path: Path) -> None:
    require_ctex()
    root = tmp_path / "zh.tex"
    root.write_text("\\documentclass{ctexart}\n\\begin{document}\n你好，世界。Accuracy was 91.4.\n\\end{document}\n")
    report = CompileGate(use_cache=False).compile(root)
    assert report.engine == "xelatex" and report.ok, report.violations
    root.write_text("% !TEX program = xelatex\n" + root.read_text().replace("91.4.", "91.4 \\oops."))
    broken = CompileGate(use_cache=False).compile(root)
    assert (broken.engine, broken.violations[0].kind, broken.violations[0].line) == (
        "xelatex", "undefined_control_sequence", 4,
    )  # fmt: skip


def test_cache_returns_the_same_verdict_without_compiling(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "c.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\nHello \\foo.\n\\end{document}\n")
    gate = CompileGate(cache_dir=tmp_path / ".cache")  # inside the paper: must not change the key
    first = gate.compile(root)
    second = gate.compile(root)
    assert (gate.compiles, gate.cache_hits) == (1, 1)
    assert second.cached and not first.cached
    assert (second.ok, second.violations) == (first.ok, first.violations)
    root.write_text(root.read_text().replace("\\foo", "foo"))
    third = gate.compile(root)
    assert third.ok and not third.cached and gate.compiles == 2


def test_gate_protocol_checks_the_candidate_not_the_disk(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "d.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n")
    gate = CompileGate(use_cache=False)
    result = gate.check(root.read_text().replace("Hello.", "Hello $."), PatchContext(root, root.read_text()))
    # TeX notices the stray $ where the paragraph ends: the line after it
    assert not result.ok and result.violations[0].line == 4


def test_log_parser_forms() -> None:
    log = (
        "(./main.tex\n(./sections/a.tex\n"
        "! LaTeX Error: Something is wrong.\n\nl.7 \\bad\n"
        ")\n./main.tex:12: Undefined control sequence.\nl.12 Hello \\foo\n"
        "http://example.org:8080: fine\n"
        "Package natbib Warning: Citation `k1' on page 1 undefined on input\n(natbib)                line 9.\n"
        "LaTeX Warning: Citation 'k2' on page 1 undefined on input line 10.\n"
        "LaTeX Warning: Label(s) may have changed. Rerun to get cross-references right.\n)"
    )
    messages = parse_tex_log(log, "main.tex")
    errors = [(m.kind, m.file, m.line, m.token) for m in messages if m.severity == "error"]
    assert errors == [
        ("latex_error", "./sections/a.tex", 7, ""),
        ("undefined_control_sequence", "./main.tex", 12, "\\foo"),
    ]
    cites = [(m.token, m.line) for m in messages if m.kind == "undefined_citation"]
    assert cites == [("k1", 9), ("k2", 10)]
    assert any(m.kind == "rerun" for m in messages)


def test_blg_parser_forms() -> None:
    bibtex = (
        "I was expecting a `,' or a `}'---line 4 of file refs.bib\n"
        'Warning--I didn\'t find a database entry for "ghost"\n'
    )
    biber = (
        '[101] Biber.pm:131> ERROR - BibTeX subsystem: /tmp/x/refs.bib_123.utf8, line 8, syntax error: found "x"\n'
        "[102] Biber.pm:131> WARN - I didn't find a database entry for 'ghost2' (section 0)\n"
    )
    assert [(m.kind, m.file, m.line, m.token) for m in parse_blg(bibtex)] == [
        ("bib_syntax", "refs.bib", 4, ""),
        ("undefined_citation", "", 0, "ghost"),
    ]
    assert [(m.kind, m.file, m.line, m.token) for m in parse_blg(biber)] == [
        ("bib_syntax", "refs.bib", 8, ""),
        ("undefined_citation", "", 0, "ghost2"),
    ]


def test_unknown_engine_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown engine 'context'"):
        CompileGate(engine="context")


def test_sandbox_environment() -> None:
    from pytest_patchwrite.engine.sandboxcmd import tex_env as sandbox_env

    os.environ["TEXMFOUTPUT"] = "/"
    try:
        env = sandbox_env()
    finally:
        del os.environ["TEXMFOUTPUT"]
    assert (env["openin_any"], env["openout_any"], env["shell_escape"]) == ("p", "p", "f")
    assert "TEXMFOUTPUT" not in env and env["max_print_line"] == "10000"


def test_an_error_read_back_from_the_toc_fails(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "main.tex"
    # the first run writes \foo into the .toc and passes; the second reads it back: `./patchwrite.toc:1: ...`
    root.write_text(
        "\\documentclass{article}\n\\begin{document}\n\\tableofcontents\n"
        "\\addtocontents{toc}{\\protect\\foo}\n\\section{One}\nText.\n\\end{document}\n"
    )
    report = CompileGate(root, use_cache=False).compile(root)
    assert not report.ok
    # located at the root (the user has no `patchwrite.toc`), at the line that wrote \\foo
    assert [(v.kind, Path(v.file).name, v.line, v.token) for v in report.violations] == [
        ("undefined_control_sequence", "main.tex", 4, "\\foo")
    ]
    assert "read back from the .toc file" in report.violations[0].message


def test_a_line_longer_than_texs_buffer_is_reported_in_the_engines_words(tmp_path: Path) -> None:
    # tester2 W2: pdflatex says `! Unable to read an entire line---bufsize=200000.` on stderr only (the log
    # stops at `(./sections/big.tex`); it was reported as no_pdf
    require_tool("pdflatex")
    paper = tmp_path / "paper"
    (paper / "sections").mkdir(parents=True)
    (paper / "sections" / "big.tex").write_text(
        "% numbers\n\nValues: " + " ".join(str(i) for i in range(50000)) + ".\n"
    )
    root = paper / "main.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\nHello.\n\\input{sections/big}\n\\end{document}\n")
    gate = CompileGate(timeout=30, cache_dir=tmp_path / "cache")
    report = gate.compile(root)
    assert not report.ok and [v.kind for v in report.violations] == ["capacity_exceeded"], report.violations
    found = report.violations[0]
    assert (found.file, found.line) == (str(paper / "sections" / "big.tex"), 3), found
    assert "longer than TeX's input buffer (200000 bytes)" in found.message and "bufsize=200000" in found.message
    # warm: a HEAD that passes, a candidate that adds the line: the same verdict, its confirmation agreeing
    (paper / "sections" / "big.tex").write_text("Values: 1 2 3.\n")
    assert gate.compile(root).ok
    long = "Values: " + " ".join(str(i) for i in range(50000)) + ".\n"
    warm = gate.compile(root, {(paper / "sections" / "big.tex").resolve(): long})
    assert warm.start == "warm" and [(v.kind, v.line) for v in warm.violations] == [("capacity_exceeded", 1)]
    assert gate.confirmations == 1 and gate.confirmations_failed == 0
    # the same words printed by the manuscript reach its log and stdout, never stderr: the log's `! ` line (as any
    # such line), not a second, stderr-made capacity_exceeded
    said = "\\message{! Unable to read an entire line---bufsize=200000.}"
    faked = f"\\documentclass{{article}}\n\\begin{{document}}\nHello.\n{said}\n\\end{{document}}\n"
    report = gate.compile(root, {root.resolve(): faked})
    assert [v.kind for v in report.violations] == ["tex_error"], report.violations
