"""`patchwrite inject` on a multi-file paper: a site in any file, named on stderr; `-o` and `--out-tree`.

The paper here is the common real layout (14 of 20 papers tried): a root that holds only
`\\input` lines. Every fault is verified by the real engine before it is written.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.corpus import BUILDS, DOCUMENTS, FAULTS, inject

ROOT = r"""% !patchwrite log = results.json
\documentclass{article}
\begin{document}
\input{sections/intro}
\input{sections/results}
\bibliographystyle{plain}
\bibliography{refs}
\end{document}
"""
INTRO = r"""\section{Introduction}
Vision encoders are brittle~\cite{smith2020}.
"""
RESULTS = r"""\section{Results}
We report accuracy on the held-out set.
Accuracy was 91.4 compared with the baseline 68.2~\cite{lee2019}.
"""
BIB = """@misc{smith2020, author = {J. Smith}, title = {Encoders}, year = {2020}}
@misc{lee2019, author = {M. Lee}, title = {Baselines}, year = {2019}}
"""
FILES = {"main.tex": ROOT, "sections/intro.tex": INTRO, "sections/results.tex": RESULTS, "refs.bib": BIB,
         "results.json": '{"accuracy": 91.4, "baseline": 68.2}\n'}  # fmt: skip
CLI = [sys.executable, "-m", "pytest_patchwrite.cli", "inject"]


def _paper(directory: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        (directory / rel).parent.mkdir(parents=True, exist_ok=True)
        (directory / rel).write_text(text, encoding="utf-8")
    return directory / "main.tex"


def _inject(path: Path, fault: str, *extra: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    cwd = cwd or path.parent
    return subprocess.run([*CLI, str(path), "--fault", fault, *extra], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize(
    ("fault", "site", "line"),
    [
        ("fake_cite", "sections/results.tex", 3),
        ("bad_number", "sections/results.tex", 3),
        ("todo", "sections/results.tex", 1),
        ("unclosed_env", "sections/results.tex", 1),
        ("unmatched_brace", "sections/results.tex", 3),
    ],
)
def test_inject_finds_its_site_in_the_files_a_root_reads(tmp_path: Path, fault: str, site: str, line: int) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    root = _paper(tmp_path)
    out = tmp_path / "broken.tex"
    proc = _inject(root, fault, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0].startswith(f"{site}:{line}: {fault} ("), proc.stderr
    assert f"written to {out}" in proc.stderr
    # -o: the faulted text of the file that holds the site, differing from it at that line only
    head = FILES[site].split("\n")
    broken = out.read_text().split("\n")
    changed = [i + 1 for i, (a, b) in enumerate(zip(head, broken, strict=False)) if a != b]
    assert changed == [line] or (len(broken) == len(head) + 1 and broken[line - 1] != head[line - 1])
    assert (tmp_path / "main.tex").read_text() == ROOT and (tmp_path / site).read_text() == FILES[site]


def test_out_tree_writes_the_faulted_manuscript_whole_and_check_fails_there(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    root = _paper(tmp_path / "paper")
    tree = tmp_path / "faulted"
    proc = _inject(root, "bad_number", "--out-tree", str(tree))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # the tree holds it; nothing on stdout
    assert f"written to {tree / 'sections' / 'results.tex'}" in proc.stderr
    copied = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file())
    assert copied == sorted(FILES)
    differing = [rel for rel in FILES if (tree / rel).read_text() != FILES[rel]]
    assert differing == ["sections/results.tex"]
    assert "99.9" in (tree / "sections" / "results.tex").read_text()
    check = subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", "check", str(tree / "main.tex"), "--no-cache"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 1
    assert "results.tex:3: unattested_number 99.9" in check.stdout + check.stderr


def test_out_tree_never_writes_over_files(tmp_path: Path) -> None:
    root = _paper(tmp_path / "paper")
    tree = tmp_path / "used"
    tree.mkdir()
    (tree / "keep.txt").write_text("mine")
    proc = _inject(root, "todo", "--out-tree", str(tree))
    assert proc.returncode == 2
    assert "used: exists and is not an empty directory" in proc.stderr
    assert [p.name for p in tree.iterdir()] == ["keep.txt"] and (tree / "keep.txt").read_text() == "mine"


def test_the_named_file_comes_first_as_before(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    # a root with a \section of its own keeps getting the fault, as before multi-file inject
    own = ROOT.replace("\\input{sections/intro}", "\\section{Overview}\nWe study encoders.\n\\input{sections/intro}")
    root = _paper(tmp_path, {**FILES, "main.tex": own})
    proc = _inject(root, "todo")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("main.tex:4: todo (content)")
    assert proc.stdout.split("\n")[3] == "TODO: check these results."
    # naming an \input file injects into it, as before
    proc = _inject(tmp_path / "sections" / "intro.tex", "fake_cite", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("sections/intro.tex:2: fake_cite") and "fake2024" in proc.stdout


def test_a_manuscript_with_no_site_anywhere_is_bad_input(tmp_path: Path) -> None:
    require_tool("pdflatex")
    plain = {"main.tex": "\\documentclass{article}\n\\begin{document}\n\\input{a}\n\\end{document}\n",
             "a.tex": "No citations here.\n"}  # fmt: skip
    root = _paper(tmp_path, plain)
    proc = _inject(root, "fake_cite")
    assert proc.returncode == 2
    assert "main.tex" in proc.stderr and "cites nothing (nor in any of the 1 other files it reads)" in proc.stderr


# sha256 over every corpus fault (24 manuscripts x 8 faults x 2 builds), recorded before multi-file inject
CORPUS_FAULTS_DIGEST = "5b4e35c20c2e7141c94f4b0e07a5b6b569dda0c73f4a2060318fa13e485324eb"


def test_the_corpus_faults_keep_their_bytes() -> None:
    lines = []
    for doc in DOCUMENTS.values():
        for build in BUILDS:
            for name in FAULTS:
                broken = inject(doc.head(build), name).broken
                lines.append((f"{doc.id}/{build}/{name}", hashlib.sha256(broken.encode()).hexdigest()))
    digest = hashlib.sha256("\n".join(f"{key} {sha}" for key, sha in sorted(lines)).encode()).hexdigest()
    assert len(lines) == 384 and digest == CORPUS_FAULTS_DIGEST


def test_fault_case_on_a_root_of_inputs_faults_the_file_it_reads(pytester: pytest.Pytester) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    _paper(pytester.path / "paper")
    pytester.makeini("[pytest]\npatchwrite_collect = false\npatchwrite_fault_base = paper/main.tex\n")
    pytester.makepyfile(
        """
        def test_repair(fault_case, try_patch):
            assert fault_case.path.name == "results.tex", fault_case.path
            assert fault_case.text == fault_case.broken and not fault_case.fixed()
            root = fault_case.path.parent.parent / "main.tex"
            assert "\\\\input{sections/results}" in root.read_text()  # the root is left as it was
            result = try_patch(fault_case.path, fault_case.oracle_edit(), gates=fault_case.gates)
            assert result.accepted, result.violations
            assert fault_case.fixed()
        """
    )
    result = pytester.runpytest_subprocess("--patchwrite-faults", "todo,bad_number")
    result.assert_outcomes(passed=2)


def test_output_makes_missing_directories_and_an_unwritable_one_is_exit_2(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    root = _paper(tmp_path / "paper")
    out = tmp_path / "made" / "for" / "it" / "broken.tex"  # as --sarif, --pages and --out-tree: mkdir -p
    assert _inject(root, "todo", "-o", str(out)).returncode == 0
    assert "TODO" in out.read_text()
    (tmp_path / "blocker").write_text("a file, not a directory")
    proc = _inject(root, "todo", "-o", str(tmp_path / "blocker" / "x.tex"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (f"patchwrite: error: {tmp_path}/blocker/x.tex: cannot write the "
                                                     f"broken text there ({tmp_path}/blocker is not a directory)")
