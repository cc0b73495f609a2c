"""The compile half of the security table: ways a manuscript could earn a verdict it does not deserve.

Each row runs the real engine in the real sandbox. The rows of `test_security.py` ask "did anything
leave the sandbox?"; these ask "is the verdict the manuscript's?": an error in a file of any name
fails the compile, a system probe answers as under latexmk while nothing else of the machine is
readable, a file swapped for a symlink during the copy never brings an outside file in, and a PDF
built to exhaust its reader costs a bounded time.
"""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.engine.pdftext import read_pdf
from pytest_patchwrite.engine.texlog import parse_tex_log
from pytest_patchwrite.files import treecopy
from pytest_patchwrite.files.manuscriptcopy import copy_manuscript_dir
from pytest_patchwrite.flows.check import CheckOptions, check_manuscript
from pytest_patchwrite.gates.compile import CompileGate
from pytest_patchwrite.gates.located import located_violations
from pytest_patchwrite.gates.report import CompileReport

BROKEN = "Fine.\n\\undefinedmacroxyz here.\n"


def _root(directory: Path, body: str, preamble: str = "", magic: str = "") -> Path:
    root = directory / "main.tex"
    root.write_text(f"{magic}\\documentclass{{article}}\n{preamble}\\begin{{document}}\n{body}\n\\end{{document}}\n")
    return root


# the name on disk, and how the document inputs it
INPUT_NAMES = [
    ("part.txt", "\\input{part.txt}"),
    ("fig.pgf", "\\input{fig.pgf}"),  # matplotlib's PGF backend output
    ("plot.tikz", "\\input{plot.tikz}"),
    ("part.TEX", "\\input{part.TEX}"),
    ("noext", "\\input{noext}"),
    ("my part.tex", '\\input{"my part"}'),
]


@pytest.mark.parametrize(("name", "command"), INPUT_NAMES, ids=[n for n, _ in INPUT_NAMES])
def test_an_error_in_an_input_of_any_name_fails_at_its_line(name: str, command: str, tmp_path: Path) -> None:
    require_tool("pdflatex")
    (tmp_path / name).write_text(BROKEN)
    root = _root(tmp_path, f"Start.\n{command}\n")
    report = CompileGate(use_cache=False, timeout=60).compile(root)
    assert not report.ok
    first = report.violations[0]
    assert (first.kind, Path(first.file).name, first.line) == ("undefined_control_sequence", name, 2), report
    assert name in report.inputs and "main.tex" in report.inputs  # the engine's record, relative to the root


def test_without_the_engines_record_the_log_parser_misses_those_names(tmp_path: Path) -> None:
    """The self-test of the rows above: the name-pattern parser alone does not see these error lines."""
    log = "(./part.txt\n./part.txt:2: Undefined control sequence.\nl.2 \\undefinedmacroxyz\n)\n"
    assert [m for m in parse_tex_log(log, "main.tex", lambda f: True) if m.file.endswith("part.txt")] == []
    found = parse_tex_log(log, "main.tex", lambda f: True, read=("./part.txt", "main.tex"))
    assert [(m.kind, m.file, m.line) for m in found] == [("undefined_control_sequence", "./part.txt", 2)]
    spaced = "(./my part\n! Undefined control sequence.\nl.2 \\undefinedmacroxyz\n)\n"
    assert parse_tex_log(spaced, "main.tex")[0].file == "main.tex"  # no extension before the space: not a file
    assert parse_tex_log(spaced, "main.tex", read=("./my part",))[0].file == "./my part"


def test_an_error_in_a_system_file_is_located_at_the_root(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = _root(tmp_path, "Hi.", preamble="\\usepackage{fontspec}\n")
    report = CompileGate(use_cache=False, timeout=60, engine="pdflatex").compile(root)
    assert not report.ok
    assert {v.file for v in report.violations} == {str(root.resolve())}, report.violations
    assert "fontspec.sty" in report.violations[0].message


def test_a_non_zero_engine_exit_fails_even_without_an_error_line() -> None:
    clean = CompileReport(ok=False, engine="xelatex", runs=1, pdf_bytes=5000, exit_code=0)
    assert located_violations(clean, Path("/p/main.tex"), 60, 5) == []
    driver = CompileReport(ok=False, engine="xelatex", runs=1, pdf_bytes=5000, exit_code=1)
    assert [v.kind for v in located_violations(driver, Path("/p/main.tex"), 60, 5)] == ["engine_exit"]


def test_a_driver_failure_fails_the_compile(tmp_path: Path) -> None:
    """xdvipdfmx failing (`Error 256 (driver return code)`) leaves no `!` line, and xelatex exits 1."""
    require_tool("xelatex")
    root = _root(tmp_path, "Hi \\special{pdf:image (nonexist.pdf)}", magic="% !TEX program = xelatex\n")
    report = CompileGate(use_cache=False, timeout=60).compile(root)
    assert not report.ok and report.exit_code == 1, report


def _swap_forever(paper: Path, canary: Path, stop: threading.Event) -> None:
    """Swap `data.tex` between a regular file and a symlink to `canary`, as fast as renames go."""
    regular, link = paper / "data.tex.r", paper / "data.tex.l"
    while not stop.is_set():
        regular.write_text("Inside.\n")
        os.replace(regular, paper / "data.tex")
        link.unlink(missing_ok=True)
        os.symlink(canary, link)
        os.replace(link, paper / "data.tex")


def _copies_with_canary(paper: Path, work: Path, rounds: int, copy: Callable[[Path, Path], object]) -> int:
    canary = paper.parent / "secret.tex"
    canary.write_text(f"{CANARY}\n")
    (paper / "data.tex").write_text("Inside.\n")
    stop = threading.Event()
    swapper = threading.Thread(target=_swap_forever, args=(paper, canary, stop), daemon=True)
    swapper.start()
    leaked = 0
    try:
        for n in range(rounds):
            target = work / str(n)
            target.mkdir(parents=True)
            copy(paper, target)
            leaked += any(CANARY in p.read_text() for p in target.rglob("*") if p.is_file())
    finally:
        stop.set()
        swapper.join()
    return leaked


CANARY = "CANARYrace7d1e"


def test_a_file_swapped_for_a_symlink_during_the_copy_never_brings_the_outside_in(tmp_path: Path) -> None:
    """A thread hammers renames while the copy runs, 400 times: the canary never reaches a copy."""
    paper = tmp_path / "repo" / "paper"
    paper.mkdir(parents=True)
    (paper / "main.tex").write_text("\\documentclass{article}\\begin{document}\\input{data}\\end{document}\n")
    copy = lambda src, dst: copy_manuscript_dir(src, dst, "patchwrite")  # noqa: E731
    assert _copies_with_canary(paper, tmp_path / "after", 400, copy) == 0


def test_the_swap_between_listing_and_opening_is_refused(tmp_path: Path) -> None:
    """The same swap at the worst instant, made deterministic: after the check (or the listing), before the open."""
    paper, canary = tmp_path / "paper", tmp_path / "secret.tex"
    paper.mkdir()
    canary.write_text(f"{CANARY}\n")

    def swap() -> None:
        (paper / "data.tex").unlink()
        os.symlink(canary, paper / "data.tex")

    # the self-test: a check of the path's real place and kind, then an open by name, copies the outside file
    (paper / "data.tex").write_text("Inside.\n")
    real = Path(os.path.realpath(paper / "data.tex"))
    assert real.parent == paper.resolve() and real.is_file()
    swap()
    assert CANARY in real.read_text()
    # the copy opens relative to the directory's descriptor with O_NOFOLLOW and judges the opened file
    (paper / "data.tex").unlink()
    (paper / "data.tex").write_text("Inside.\n")
    dir_fd = os.open(paper, os.O_RDONLY | os.O_DIRECTORY)
    try:
        swap()
        assert treecopy._open_file("data.tex", dir_fd, "data.tex") is None
        top_fd = os.open(paper, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert treecopy._open_beneath(top_fd, str(paper.resolve()), "data.tex") is None  # the link leaves
            os.symlink("data.tex", paper / "alias.tex")  # a link to a link that leaves
            assert treecopy._open_beneath(top_fd, str(paper.resolve()), "alias.tex") is None
            (paper / "data.tex").unlink()
            (paper / "data.tex").write_text("Inside.\n")
            opened = treecopy._open_beneath(top_fd, str(paper.resolve()), "alias.tex")
            assert opened is not None and opened[1] == "data.tex"
            os.close(opened[0])
        finally:
            os.close(top_fd)
    finally:
        os.close(dir_fd)


def test_a_shared_bibliography_swapped_after_the_check_is_never_copied_from_outside(tmp_path: Path) -> None:
    """The `../refs.bib` a paper shares with its repository is opened beneath the repository's top with
    O_NOFOLLOW too: swapped for a link out after the snapshot was taken, it is an environment error, no copy."""
    import subprocess

    from pytest_patchwrite.errors import EnvironmentFault
    from pytest_patchwrite.files.paths import Boundary
    from pytest_patchwrite.gates.mirror import copy_for_compile
    from pytest_patchwrite.snapshot.manuscript import load_manuscript

    repo = tmp_path / "repo"
    paper = repo / "paper"
    paper.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "refs.bib").write_text("@misc{a, title={A}}\n")
    root = paper / "main.tex"
    root.write_text("\\documentclass{article}\\begin{document}\\cite{a}\\bibliographystyle{plain}"
                    "\\bibliography{../refs}\\end{document}\n")
    many = repo / "data"  # a repository over the copy's file cap: only the shared bibliography is mirrored
    many.mkdir()
    for i in range(20001):
        (many / f"{i}.txt").touch()
    canary = tmp_path / "secret.bib"
    canary.write_text(f"@misc{{{CANARY}, title={{x}}}}\n")
    manuscript = load_manuscript(root, boundary=Boundary.for_root(root))
    boundary = manuscript.boundary or Boundary.for_root(root)
    first = tmp_path / "first"
    first.mkdir()
    _work, _copied, mirrored = copy_for_compile(manuscript, first, boundary, "main")
    assert mirrored == "bibliographies" and (first / "refs.bib").read_text().startswith("@misc{a")
    (repo / "refs.bib").unlink()
    os.symlink(canary, repo / "refs.bib")
    second = tmp_path / "second"
    second.mkdir()
    with pytest.raises(EnvironmentFault, match="shared bibliography"):
        copy_for_compile(manuscript, second, boundary, "main")
    assert not any(CANARY in p.read_text() for p in second.rglob("*.bib"))


def test_one_message_per_error_and_line(tmp_path: Path) -> None:
    """xelatex reports a picture it cannot load twice at the same line; the verdict says it once."""
    require_tool("xelatex")
    root = _root(tmp_path, "\\includegraphics{nofigure.pdf}", preamble="\\usepackage{graphicx}\n",
                 magic="% !TEX program = xelatex\n")  # fmt: skip
    report = CompileGate(use_cache=False, timeout=60).compile(root)
    shown = [(v.kind, v.line, v.message) for v in report.violations]
    assert len(shown) == 1 and "nofigure.pdf" in shown[0][2], shown


def _form_bomb(ops: int) -> bytes:
    """Return a one-page PDF whose page draws a deflated form XObject of `ops` text operations (a few KB)."""
    form = zlib.compress(b"BT /F1 1 Tf 0 0 Td (a) Tj ET\n" * ops, 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /X0 5 0 R >> "
        b"/Font << /F1 6 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length 11 >>\nstream\nq /X0 Do Q\n\nendstream",
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 6 0 R >> >> "
        b"/Filter /FlateDecode /Length %d >>\nstream\n" % len(form) + form + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_pdf_built_to_exhaust_its_reader_is_read_within_the_timeout(tmp_path: Path) -> None:
    """A 10 KB figure drawn 40 times: pypdf would take tens of minutes; the source rules decide instead, and say so."""
    require_tool("pdflatex")
    (tmp_path / "bomb.pdf").write_bytes(_form_bomb(100_000))
    draws = "\n".join("\\includegraphics[width=1cm]{bomb.pdf}" for _ in range(40))
    root = _root(tmp_path, f"TODO: finish.\n{draws}", preamble="\\usepackage{graphicx}\n")
    results = check_manuscript(root, CheckOptions(use_cache=False, timeout=10))
    assert results["compile"].ok, results["compile"]
    placeholders = results["placeholders"]
    assert placeholders.details["pdf_checked"] is False
    assert "took longer than 10 s" in placeholders.details["pdf_note"]
    assert [v.token for v in placeholders.violations] == ["TODO"]  # the source rules decided


def test_the_pdf_reader_runs_under_a_memory_cap(tmp_path: Path) -> None:
    (tmp_path / "bomb.pdf").write_bytes(_form_bomb(100_000))
    found = read_pdf(tmp_path / "bomb.pdf", seconds=60, memory_bytes=64 << 20)  # below what Python itself needs
    assert found.text is None and "more than 64 MB" in found.note, found


# typeset but (before) not checked: each row's TODO reaches the PDF, so the placeholders item must fail
TYPESET = {
    "setboolean": (
        {"main.tex": "\\usepackage{ifthen}\n\\newif\\ifdraft\n\\setboolean{draft}{true}\n"},
        "\\ifdraft TODO\\fi",
    ),
    "csname-true": ({"main.tex": "\\newif\\ifdraft\n\\csname drafttrue\\endcsname\n"}, "\\ifdraft TODO\\fi"),
    "local-style-sets-it": (
        {"main.tex": "\\newif\\ifdraft\n\\usepackage{mydraft}\n",
         "mydraft.sty": "\\ProvidesPackage{mydraft}\\drafttrue\n"},
        "\\ifdraft TODO\\fi",
    ),
    "input-no-braces": ({"main.tex": "", "nums.tex": "TODO: the numbers.\n"}, "\\input nums\n"),
    "input-if-file-exists": ({"main.tex": "", "nums.tex": "TODO: the numbers.\n"}, "\\InputIfFileExists{nums}{}{}"),
    "import": ({"main.tex": "\\usepackage{import}\n", "sub/part.tex": "TODO: part.\n"}, "\\import{sub/}{part}"),
    "subimport": (
        {"main.tex": "\\usepackage{import}\n", "sub/part.tex": "\\subimport{deeper/}{leaf}\n",
         "sub/deeper/leaf.tex": "TODO: leaf.\n"},
        "\\subimport{sub/}{part}",
    ),
    "input-through-a-macro": (
        {"main.tex": "\\newcommand\\chapterfile[1]{\\input{chapters/#1}}\n",
         "chapters/results.tex": "TODO: results.\n"},
        "\\chapterfile{results}",
    ),
}  # fmt: skip


@pytest.mark.parametrize("row", sorted(TYPESET))
def test_what_is_typeset_is_checked(row: str, tmp_path: Path) -> None:
    require_tool("pdflatex")
    files, body = TYPESET[row]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        if name != "main.tex":
            (tmp_path / name).write_text(text)
    (tmp_path / "main.tex").write_text(
        f"\\documentclass{{article}}\n{files['main.tex']}\\begin{{document}}\n{body}\n\\end{{document}}\n"
    )
    results = check_manuscript(tmp_path / "main.tex", CheckOptions(use_cache=False))
    assert results["compile"].ok, results["compile"]
    assert [v.token for v in results["placeholders"].violations] == ["TODO"], results["placeholders"]


def test_a_remapped_text_layer_leaves_the_decision_to_the_source(tmp_path: Path) -> None:
    """A ToUnicode remap makes the PDF's text say `T0D0` where the page shows TODO: the PDF proves nothing then."""
    require_tool("pdflatex")
    remap = "\\input{glyphtounicode}\\pdfglyphtounicode{O}{0030}\\pdfgentounicode=1\n"
    root = _root(tmp_path, "TODO: the ablation.", preamble=remap)
    results = check_manuscript(root, CheckOptions(use_cache=False))
    placeholders = results["placeholders"]
    assert [v.token for v in placeholders.violations] == ["TODO"], placeholders
    assert placeholders.details["pdf_checked"] is False and "\\pdfglyphtounicode" in placeholders.details["pdf_note"]
