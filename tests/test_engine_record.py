"""The engine's record in every flow that compiles: the bibliographies bibtex/biber used, the files the engine
typeset and the keys it cited (the job's own `.aux`/`.bcf`), for `check`, `apply`, `try_patch`, the fixtures, the
pytest `diff` item and `patchwrite diff`. Real engines, real biber and bibtex, a class of our own that names its
bibliography through a macro (as ReScience C's `\\addbibresource{\\articleBIBLIOGRAPHY}`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.autoraters.references import load_references
from pytest_patchwrite.cli import main
from pytest_patchwrite.flows.check import CheckOptions, check_manuscript
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates import default_gates

# the bibliography is named through a macro set in metadata.tex; `\refcite` and `\chapterfile` are the class's own
# commands, out of the scanner's sight (it reads the manuscript's files, not the class)
CLASS = r"""\NeedsTeXFormat{LaTeX2e}
\ProvidesClass{journal}[2024/01/01 names its bibliography through a macro]
\LoadClass{article}
\input{metadata.tex}
\RequirePackage[backend=biber]{biblatex}
\addbibresource{\articleBIBLIOGRAPHY}
\newcommand\refcite[1]{\cite{#1}}
\newcommand\chapterfile[1]{\input{chapters/#1}}
"""
REFS = """@book{knuth1984, author = {Donald Knuth}, title = {The {\\TeX}book}, year = {1984}, publisher = {AW}}
@book{lamport1994, author = {Leslie Lamport}, title = {{\\LaTeX}}, year = {1994}, publisher = {AW}}
"""
MAIN = (
    "% !patchwrite log = results.json\n"  # 1
    "\\documentclass{journal}\n"  # 2
    "\\begin{document}\n"  # 3
    "As \\cite{knuth1984} shows.\n"  # 4
    "\n"  # 5
    "More text.\n"  # 6
    "\\chapterfile{results}\n"  # 7
    "\\printbibliography\n"  # 8
    "\\end{document}\n"
)
RESULTS = "% !TEX root = ../main.tex\nThe results follow.\n\nNothing else.\n"


def journal_paper(directory: Path, main: str = MAIN) -> Path:
    """Write the paper into `directory` and return its root."""
    require_tool("pdflatex")
    require_tool("biber")
    (directory / "chapters").mkdir(parents=True, exist_ok=True)
    files = {"journal.cls": CLASS, "metadata.tex": "\\def\\articleBIBLIOGRAPHY{bibliography.bib}\n",
             "bibliography.bib": REFS, "main.tex": main, "chapters/results.tex": RESULTS,
             "results.json": '{"acc": 91.4}\n'}  # fmt: skip
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory / "main.tex"


def edit(line: int, text: str) -> str:
    return f"EDIT {line} {line}\n{text}\n"


def test_apply_cites_what_the_macro_named_bibliography_defines(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = journal_paper(tmp_path)
    (tmp_path / "good.txt").write_text(edit(6, "As \\cite{lamport1994} shows too."))
    (tmp_path / "bad.txt").write_text(edit(6, "As \\cite{fake2025} shows too."))
    assert main(["apply", str(root), str(tmp_path / "bad.txt")]) == 1
    out = capsys.readouterr().out
    assert "rejected at evidence (unknown_cite:fake2025)" in out
    assert "main.tex:6: unknown_cite fake2025 is not defined (bib: bibliography.bib; 2 keys defined)" in out
    assert "fake2025" not in root.read_text()
    # before: "lamport1994 is cited but no bibliography is declared", the edit rejected
    assert main(["apply", str(root), str(tmp_path / "good.txt")]) == 0, capsys.readouterr().out
    assert "\\cite{lamport1994}" in root.read_text()


def test_try_patch_reads_the_keys_the_engine_cited_whatever_command(tmp_path: Path) -> None:
    root = journal_paper(tmp_path)
    gates = default_gates(root)
    bad = try_patch(root, edit(6, "As \\refcite{fake2025} shows."), gates)
    assert (bad.accepted, bad.stage, bad.reason) == (False, "evidence", "unknown_cite:fake2025"), bad.violations
    (found,) = [v for v in bad.violations if v.token == "fake2025"]
    assert (Path(found.file).name, found.line) == ("main.tex", 6)
    assert "the compile cited it (its .aux)" in found.message
    good = try_patch(root, edit(6, "As \\refcite{lamport1994} shows."), gates)
    assert good.accepted, good.violations
    # HEAD now cites lamport1994 through \refcite: an edit elsewhere is not held to it (HEAD's own record)
    again = try_patch(root, edit(5, "Still fine."), gates)
    assert again.accepted, again.violations


def test_apply_checks_a_file_input_through_a_macro(tmp_path: Path) -> None:
    root = journal_paper(tmp_path)
    chapter = tmp_path / "chapters" / "results.tex"
    gates = default_gates(chapter)
    todo = try_patch(chapter, edit(2, "TODO: the results."), gates)
    assert (todo.accepted, todo.stage, todo.reason) == (False, "evidence", "placeholder:TODO"), todo.violations
    number = try_patch(chapter, edit(2, "Accuracy was 99.9\\%."), gates)
    assert (number.accepted, number.reason) == (False, "unattested_number:99.9\\%"), number.violations
    assert (Path(number.violations[0].file).name, number.violations[0].line) == ("results.tex", 2)
    attested = try_patch(chapter, edit(2, "Accuracy was 91.4\\%."), gates)
    assert attested.accepted, attested.violations
    assert "91.4" in chapter.read_text() and root.read_text() == MAIN


def test_check_locates_keys_cited_through_a_command_it_does_not_know(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    (tmp_path / "mycites.sty").write_text("\\ProvidesPackage{mycites}\n\\newcommand\\citefrom[1]{\\cite{#1}}\n")
    (tmp_path / "refs.bib").write_text(REFS)
    (tmp_path / "chap.tex").write_text("A chapter \\citefrom{phantom}.\n")
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage{mycites}\n\\def\\keypart{where}\n\\begin{document}\n"  # 1-4
        "\\citefrom{ghost2024} and again \\citefrom{ghost2024}, \\citefrom{knuth1984}.\n"  # 5
        "\\cite{fake2025}\n"  # 6
        "\\citefrom{fake2025}\n"  # 7: the static scan's key already (line 6)
        "\\citefrom{no\\keypart}\n"  # 8: the key `nowhere` stands nowhere in the text
        "\\cite{fa%\n  ke}\n"  # 9-10: TeX drops the comment, its line end and the next line's blanks
        "\\include{chap}\n\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n"
    )
    results = check_manuscript(tmp_path / "main.tex", CheckOptions(use_cache=False))
    assert results["compile"].ok, results["compile"]
    found = sorted((Path(v.file).name, v.line, v.kind, v.token) for v in results["citations"].violations)
    assert found == [
        ("chap.tex", 1, "unknown_cite", "phantom"),  # from chap.aux, the \include'd file's
        ("main.tex", 0, "unknown_cite", "nowhere"),
        ("main.tex", 5, "unknown_cite", "ghost2024"),  # one per key and line
        ("main.tex", 6, "unknown_cite", "fake2025"),
        ("main.tex", 9, "unknown_cite", "fa \n  ke"),  # the scan's, once (the .aux's `fake` is the same key)
    ], results["citations"]


def test_an_aux_the_checkout_holds_names_no_key(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    (tmp_path / "refs.bib").write_text(REFS)
    (tmp_path / "one.tex").write_text("One \\cite{knuth1984}.\n")
    (tmp_path / "two.tex").write_text("Two.\n")
    planted = "\\relax\n\\citation{planted2024}\n"
    for name in ("two.aux", "main.aux", "patchwrite.aux"):  # \includeonly leaves two.aux as the checkout has it
        (tmp_path / name).write_text(planted)
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\includeonly{one}\n\\begin{document}\n\\include{one}\n\\include{two}\n"
        "\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n"
    )
    results = check_manuscript(tmp_path / "main.tex", CheckOptions(use_cache=False))
    assert not any("planted2024" in v.token for r in results.values() for v in r.violations), results


def test_rate_refs_never_reads_an_aux_beside_the_paper(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "refs.bib").write_text(REFS)
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\cite{knuth1984}\n\\bibliography{refs}\n\\end{document}\n"
    )
    before = [(r.key, r.resolved) for r in load_references(tmp_path / "main.tex").references]
    assert main(["rate", "refs", str(tmp_path / "main.tex"), "--json"]) == 0
    printed = capsys.readouterr().out
    (tmp_path / "main.aux").write_text(
        "\\relax\n\\citation{lamport1994}\n\\citation{planted2024}\n\\bibdata{other}\n\\bibcite{planted2024}{1}\n"
    )
    (tmp_path / "main.bcf").write_text("<bcf:citekey order='1'>planted2024</bcf:citekey>\n")
    assert [(r.key, r.resolved) for r in load_references(tmp_path / "main.tex").references] == before
    assert before == [("knuth1984", True)]
    assert main(["rate", "refs", str(tmp_path / "main.tex"), "--json"]) == 0
    assert capsys.readouterr().out == printed


def test_a_declared_bibliography_adds_to_the_engines_and_is_warned_about_when_unread(tmp_path: Path) -> None:
    root = journal_paper(tmp_path, "% !patchwrite bib = extra.bib\n" + MAIN)
    (tmp_path / "extra.bib").write_text("@book{extra2020, title = {Extra}, year = {2020}}\n")
    results = check_manuscript(root, CheckOptions(use_cache=False))
    citations = results["citations"]
    assert citations.ok, citations  # before: the comment replaced the engine's bibliography, knuth1984 unknown
    assert sorted(Path(p).name for p in citations.details["bib"]) == ["bibliography.bib", "extra.bib"]
    (warning,) = citations.violations
    assert (warning.kind, warning.severity, Path(warning.file).name, warning.line, warning.token) == (
        "unread_bib", "warning", "main.tex", 1, str(tmp_path / "extra.bib"))  # fmt: skip
    assert "never read it" in warning.message


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding the journal paper under paper/, committed on main."""
    journal_paper(tmp_path / "paper")
    for args in (("init", "-q", "-b", "main"), ("config", "user.email", "t@example.org"), ("config", "user.name", "T"),
                 ("add", "-A"), ("commit", "-qm", "base")):  # fmt: skip
        subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, check=True)
    return tmp_path


def _line6(repo: Path, text: str) -> None:
    main_tex = repo / "paper" / "main.tex"
    lines = main_tex.read_text().splitlines(keepends=True)
    lines[5] = text + "\n"
    main_tex.write_text("".join(lines))


def test_cli_diff_compiles_and_uses_the_engine_record(repo: Path) -> None:
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", "diff", "paper/main.tex", "--base", "main", "--json"]
    _line6(repo, "As \\cite{lamport1994} shows too.")
    done = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    out = json.loads(done.stdout)
    assert (done.returncode, out["ok"], out["compile"]["ok"]) == (0, True, True), out
    static = subprocess.run([*cmd, "--no-compile"], cwd=repo, capture_output=True, text=True)
    assert static.returncode == 1 and json.loads(static.stdout)["compile"] is None  # the bib only the engine names
    _line6(repo, "As \\refcite{fake2025} shows too.")
    done = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    out = json.loads(done.stdout)
    assert done.returncode == 1, out
    assert [(v["kind"], v["token"], v["line"]) for v in out["violations"]][:1] == [("unknown_cite", "fake2025", 6)]


def test_diff_item_uses_the_engine_record(repo: Path) -> None:
    def diff_item() -> dict:
        subprocess.run([sys.executable, "-m", "pytest", "paper", "--patchwrite-base", "main", "-p", "no:cacheprovider",
                        "--patchwrite-report", "report.json"], cwd=repo, capture_output=True, text=True)  # fmt: skip
        return json.loads((repo / "report.json").read_text())["manuscripts"][0]["gates"]["diff"]

    _line6(repo, "As \\cite{lamport1994} shows too.")
    diff = diff_item()
    assert diff["ok"], diff
    _line6(repo, "As \\refcite{fake2025} shows too.")
    diff = diff_item()
    assert not diff["ok"] and ("unknown_cite", "fake2025", 6) in {
        (v["kind"], v["token"], v["line"]) for v in diff["violations"]}, diff  # fmt: skip


def test_fixtures_use_the_engine_record(pytester: pytest.Pytester, tmp_path: Path) -> None:
    paper = journal_paper(tmp_path / "paper")
    pytester.makeini("[pytest]\npatchwrite_collect = false\n")
    pytester.makepyfile(
        test_agent=f"""
        from pathlib import Path

        PAPER = Path({str(paper)!r})

        def test_cites(manuscript, try_patch):
            doc = manuscript(PAPER)
            assert try_patch(doc, "EDIT 6 6\\nAs \\\\cite{{lamport1994}} shows.\\n").accepted
            bad = try_patch(doc, "EDIT 6 6\\nAs \\\\refcite{{fake2025}} shows.\\n")
            assert (bad.accepted, bad.reason) == (False, "unknown_cite:fake2025"), bad.violations

        def test_macro_input(manuscript, try_patch):
            doc = manuscript(PAPER)
            chapter = doc.directory / "chapters" / "results.tex"
            bad = try_patch(chapter, "EDIT 2 2\\nTODO: the results.\\n")
            assert (bad.accepted, bad.reason) == (False, "placeholder:TODO"), bad.violations
        """
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=2)
