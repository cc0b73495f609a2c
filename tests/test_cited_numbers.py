"""`cited_number`: in `check`, a number of other work in a sentence that cites it is a warning, not an error.

An edit or a pull request that adds a number is judged as adding it, whatever its sentence cites.
Every test runs the real evidence gate on a small paper with a real log and bibliography.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_patchwrite.flows.check import numbers_result
from pytest_patchwrite.flows.prdiff import GitBase, diff_manuscript
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates.evidence import EvidenceConfig, EvidenceGate, evaluate
from pytest_patchwrite.model import ERROR, WARNING
from pytest_patchwrite.snapshot.manuscript import load_manuscript
from pytest_patchwrite.tex.latex import scan

PAPER = r"""% !patchwrite log = results.json
\documentclass{article}
\begin{document}
Smith et al.~\cite{smith2020} report 76.5\% on the same benchmark.
We reach 91.4\% with our encoder.
Our accuracy of 91.4 beats the 88.0 of prior work~\cite{lee2019}.
On ImageNet (e.g.\ the split of \cite{lee2019}) it stays at 90.2 and
reaches 93.1 after tuning. Fig.~3 shows the rest, as in \cite{smith2020}.
\begin{tabular}{lc}
ResNet~\cite{lee2019} & 76.1 \\
Ours & 91.4 \\
Ours (large) & 92.7 \\
\end{tabular}
\begin{thebibliography}{9}
\bibitem{smith2020} J. Smith. Encoders. 2020.
\bibitem{lee2019} M. Lee. Baselines. 2019.
\end{thebibliography}
\end{document}
"""


def _paper(tmp_path: Path, text: str = PAPER) -> Path:
    (tmp_path / "results.json").write_text('{"acc": 0.914}')
    root = tmp_path / "main.tex"
    root.write_text(text)
    return root


def _numbers(root: Path) -> list[tuple[str, int, str, str]]:
    report = evaluate(load_manuscript(root), EvidenceConfig())
    return [(v.kind, v.line, v.token, v.severity) for v in report.numbers or []]


def test_check_warns_on_numbers_of_cited_work_and_fails_on_ours(tmp_path: Path) -> None:
    assert _numbers(_paper(tmp_path)) == [
        ("cited_number", 4, r"76.5\%", WARNING),  # the cited work's result
        # a sentence that prints a logged number (91.4) reports our results: its 88.0 is not excused
        ("unattested_number", 6, "88.0", ERROR),
        # `e.g.\ ` and `Fig.~3` end no sentence: 90.2 and 93.1 share the sentence that cites lee2019
        ("cited_number", 7, "90.2", WARNING),
        ("cited_number", 8, "93.1", WARNING),
        ("cited_number", 10, "76.1", WARNING),  # a table row is its own sentence
        ("unattested_number", 12, "92.7", ERROR),
    ]


def test_the_warning_names_the_cited_work_and_check_passes_on_it(tmp_path: Path) -> None:
    root = _paper(tmp_path, PAPER.replace("Our accuracy of 91.4 beats the 88.0", "Our accuracy of 91.4 beats the 91.4"))
    root.write_text(root.read_text().replace("Ours (large) & 92.7", "Ours (large) & 91.4"))
    report = evaluate(load_manuscript(root), EvidenceConfig())
    [first, *_] = report.numbers or []
    assert first.kind == "cited_number" and "cites smith2020" in first.message
    result = numbers_result(report)
    assert result is not None and result.ok and len(result.violations) == 4


def test_without_a_cite_the_same_number_is_an_error(tmp_path: Path) -> None:
    root = _paper(tmp_path, PAPER.replace(r"Smith et al.~\cite{smith2020} report", "Smith et al. report"))
    assert ("unattested_number", 4, r"76.5\%", ERROR) in _numbers(root)


@pytest.mark.parametrize(
    ("source", "shared"),
    [
        (r"Smith et al.~\cite{a} report 1.5. We reach 2.5.", [True, False]),
        (r"Smith et al. \cite{a} report 1.5 and e.g. 2.5 on X. We get 3.5.", [True, True, False]),
        (r"As in \cite{a} (i.e.\ 1.5), see Fig.~3 and Eq. 4 for 2.5. Then 3.5.", [True, True, False]),
        (r"It is 1.5 \cite{a}. 2.5 follows? 3.5 \cite{b}! 4.5 \cite{c}", [True, False, True, True]),
        (r"It is 1.5. \cite{a} 2.5 follows.", [False, True]),  # a cite after the point opens the next one
        ("A 1.5 \\cite{a}\n\nA new paragraph: 2.5.", [True, False]),
        (r"\textbf{Results.} We get 1.5 as \cite{a} did.\footnote{Unlike 2.5.} Then 3.5.", [True, False, False]),
        (r"\nocite{a} We get 1.5.", [False]),
    ],
)
def test_sentences_are_latex_aware(source: str, shared: list[bool]) -> None:
    found = scan(source)
    assert [n.sentence in found.cited_sentences for n in found.numbers] == shared


def test_an_edit_that_adds_a_number_beside_a_cite_is_rejected(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    before = root.read_bytes()
    gate = EvidenceGate(root, EvidenceConfig())
    result = try_patch(root, "EDIT 4 4\nSmith et al.~\\cite{smith2020} report 77.9\\% on the same benchmark.\n", [gate])
    assert not result.accepted and result.stage == "evidence"
    assert [(v.kind, v.token, v.severity) for v in result.violations] == [("unattested_number", r"77.9\%", ERROR)]
    assert "whatever its sentence cites" in result.violations[0].message
    assert root.read_bytes() == before
    # an edit elsewhere keeps what HEAD holds: its cited numbers are no reason to reject it
    result = try_patch(root, "EDIT 5 5\nWe reach 91.4\\% with our new encoder.\n", [gate])
    assert result.accepted, result.violations
    # nor does adding a cite to a sentence whose number HEAD already held unattested
    result = try_patch(root, "EDIT 12 12\nOurs (large)~\\cite{lee2019} & 92.7 \\\\\n", [gate])
    assert result.accepted, result.violations


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)


def test_a_pull_request_that_adds_a_number_beside_a_cite_fails_the_diff_item(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: apt-get install git")
    root = _paper(tmp_path)
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "-c", "user.email=t@example.org", "-c", "user.name=T", "add", "-A")
    _git(tmp_path, "-c", "user.email=t@example.org", "-c", "user.name=T", "commit", "-qm", "base")
    text = root.read_text()
    root.write_text(text.replace("report 76.5\\% on the same", "report 76.5\\% (and 79.9\\%) on the same"))
    root.write_text(root.read_text().replace("Fig.~3 shows the rest", "Fig.~3 shows the rest again"))
    report = diff_manuscript(root, GitBase.open(tmp_path, "main"), EvidenceConfig())
    found = [(f.kind, f.line, f.token, f.severity) for f in report.failures]
    # the added 79.9 is an error; the kept 76.5 on the same changed line stays the cited work's (a warning)
    assert ("unattested_number", 4, r"79.9\%", ERROR) in found
    assert ("cited_number", 4, r"76.5\%", WARNING) in found
    # a changed line whose numbers were all there before keeps its warnings
    assert ("cited_number", 8, "93.1", WARNING) in found
    assert not report.result().ok
