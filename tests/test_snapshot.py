"""One snapshot per check: the manuscript is read once, and every gate takes the same object.

The open counts come from a Python audit hook on `open` in a fresh process (real engine, real sandbox); the rest
pins each duplicate the snapshot removed with the behaviour it keeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.errors import InputError
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates import evidence
from pytest_patchwrite.gates.compile import CompileGate
from pytest_patchwrite.gates.evidence import EvidenceConfig, EvidenceGate, evaluate
from pytest_patchwrite.gates.headrules import line_opcodes, unified_lines
from pytest_patchwrite.model import PatchContext
from pytest_patchwrite.numbers import logread
from pytest_patchwrite.plugin import plugin
from pytest_patchwrite.snapshot import bib
from pytest_patchwrite.snapshot.manuscript import load_manuscript
from pytest_patchwrite.snapshot.snapshot import Snapshots
from pytest_patchwrite.tex import latex, texcites, texconditionals, texmask

SECTIONS = 5
NAMES = ["main.tex", "results.json", "refs.bib", "train.csv", "main.bindings.json",
         *(f"sec{i}.tex" for i in range(SECTIONS))]  # fmt: skip

# run in a fresh process: every open of a manuscript file by our Python code, by its name (the sandbox copy opens
# files relative to a directory's descriptor, so the hook sees bare names); the engine runs in its own processes
COUNTER = textwrap.dedent(
    """
    import collections, json, os, sys
    names, counts, on = set(json.loads(sys.argv[1])), collections.Counter(), [False]
    def hook(event, args):
        if event == "open" and on[0] and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            if os.path.basename(path) in names and not path.startswith(sys.argv[2]):
                counts[os.path.basename(path)] += 1
    sys.addaudithook(hook)
    from pytest_patchwrite.cli import main
    on[0] = True
    code = main(sys.argv[3:])
    on[0] = False
    print(json.dumps({"code": code, "opens": counts}))
    """
)


def _paper(top: Path) -> Path:
    """Return the root of a git repository's paper: five \\input sections, a shared ../refs.bib, a JSON log."""
    paper = top / "paper"
    paper.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    (top / "refs.bib").write_text("@article{key1, title={T}, author={A}, year={2020}, journal={J}}\n")
    (paper / "results.json").write_text(json.dumps({"acc": 91.4, "f1": 0.87}))
    for i in range(SECTIONS):
        (paper / f"sec{i}.tex").write_text(f"Section {i}: accuracy 91.4 \\cite{{key1}}.\n\nMore text {i}.\n")
    inputs = "\n".join(f"\\input{{sec{i}}}" for i in range(SECTIONS))
    root = paper / "main.tex"
    root.write_text(
        "% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\n"
        f"{inputs}\n\\bibliographystyle{{plain}}\n\\bibliography{{../refs}}\n\\end{{document}}\n"
    )
    return root


def _opens(tmp_path: Path, *argv: str) -> tuple[int, dict[str, int]]:
    sandboxes = os.path.join(os.environ.get("TMPDIR", "/tmp"), "patchwrite-")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    proc = subprocess.run(
        [sys.executable, "-c", COUNTER, json.dumps(NAMES), sandboxes, *argv],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result["code"], result["opens"]


def test_a_check_opens_every_file_at_most_twice(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    root = _paper(tmp_path / "repo")
    code, opens = _opens(tmp_path, "check", str(root), "--no-cache")
    assert code == 0
    assert set(opens) >= {"main.tex", "results.json", "refs.bib", "sec0.tex"}  # the hook saw the reads
    assert max(opens.values()) <= 2, opens  # before the snapshot: the root 5 times, each section 3


def test_a_check_with_a_bindings_file_reads_each_log_once(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    root = _paper(tmp_path / "repo")
    (root.parent / "train.csv").write_text("step,loss,acc\n1,0.4512,0.8\n2,0.2345,0.87\n")
    root.write_text(root.read_text().replace("log = results.json", "log = results.json, train.csv"))
    (root.parent / "sec1.tex").write_text("The loss fell to 0.2345 \\cite{key1}.\n")
    from pytest_patchwrite.flows.bind import bind_root, write_bindings

    outcome = bind_root(root, EvidenceConfig())
    assert {b.best.entry.log.name for b in outcome.reconciled.result.bound} == {"results.json", "train.csv"}
    write_bindings(outcome.path, outcome.new_text)
    code, opens = _opens(tmp_path, "check", str(root), "--no-cache")
    assert code == 0
    assert set(opens) >= {"main.tex", "results.json", "train.csv", "main.bindings.json", "sec0.tex"}
    # one read serves the pool lock and the bindings lock (and the sandbox copy writes the bytes read)
    assert opens["results.json"] == 1 and opens["train.csv"] == 1 and opens["main.bindings.json"] == 1, opens
    assert max(opens.values()) <= 2, opens


def test_an_apply_opens_untouched_files_twice_and_the_edited_one_four_times(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    root = _paper(tmp_path / "repo")
    edit = tmp_path / "edit.txt"
    edit.write_text("EDIT 1 1\nSection 2: accuracy 0.87 \\cite{key1}.\n")
    code, opens = _opens(tmp_path, "apply", str(root.parent / "sec2.tex"), str(edit))
    assert code == 0
    assert (root.parent / "sec2.tex").read_text().startswith("Section 2: accuracy 0.87")
    # read under the lock, locked, compared before the swap, checked before the lock: 4; before it was 8
    assert opens.pop("sec2.tex") <= 4, opens
    assert max(opens.values()) <= 2, opens  # before: 6 each (the bibliography and the log 3)


def test_a_candidate_is_derived_without_reading_what_head_holds(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    head = load_manuscript(root)
    section = root.parent / "sec2.tex"
    opened: list[str] = []
    sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" and opened is not None else 0)
    opened.clear()
    candidate = head.derive({section: "Section 2 edited.\n"})
    seen = [name for name in opened if name.endswith(".tex")]
    opened = None  # type: ignore[assignment]  # the hook stays installed; it records nothing more
    assert seen == []
    assert candidate.base is head and candidate.supplied == {section.resolve(): "Section 2 edited.\n"}
    assert candidate.digests[root.resolve()] == head.digests[root.resolve()]
    assert candidate.digests[section.resolve()] != head.digests[section.resolve()]
    assert candidate.data is head.data  # one store of bytes read: what one reads the other need not


def test_the_compile_writes_the_snapshots_bytes(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "main.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n")
    gate = CompileGate(root, use_cache=False)
    snapshot = gate.snapshot(root)
    root.write_text("\\documentclass{article}\n\\begin{document}\n\\undefinedmacro\n\\end{document}\n")
    assert gate.compile(snapshot).ok  # the bytes that were checked are the bytes compiled, not the disk's later ones
    assert not gate.compile(root).ok


def test_the_verdict_cache_is_keyed_by_the_snapshots_content(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "main.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n")
    gate = CompileGate(root, cache_dir=tmp_path / "cache")
    assert not gate.compile(gate.snapshot(root)).cached
    assert gate.compile(root).cached  # the same bytes read again: the same key
    edited = gate.snapshot(root).derive({root: root.read_text().replace("Hello", "Hi")})
    assert not gate.compile(edited).cached  # other bytes never share an answer


def test_the_gates_of_one_transaction_share_the_snapshots(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = _paper(tmp_path)
    section = root.parent / "sec1.tex"
    built: list[Snapshots] = []

    class Spy:  # a gate of our own: it sees the snapshots the transaction's other gates used
        stage = "spy"

        def check(self, text: str, context: PatchContext):  # noqa: ANN201
            built.append(context.snapshots)
            from pytest_patchwrite.model import GateResult

            return GateResult(True)

    gates = [CompileGate(use_cache=False), EvidenceGate(), Spy()]
    result = try_patch(section, "EDIT 1 1\nSection 1: accuracy 0.87 \\cite{key1}.\n", gates)
    assert result.accepted, result.violations
    (snapshots,) = built
    assert snapshots.root(section) == root.resolve()  # a gate without a root judges the manuscript reading the file
    assert len(snapshots.built) == 1  # compile and evidence gates: one HEAD snapshot, one candidate


def test_declared_at_reads_the_configurations_own_text(tmp_path: Path) -> None:
    root = tmp_path / "main.tex"
    head = "% !patchwrite log = /etc/passwd.json\n\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n"
    candidate = "% one\n% two\n" + head
    root.write_text(head)
    with pytest.raises(InputError) as refused:  # a log outside the tree: exit 2 at its declaration
        evaluate(load_manuscript(root, {root: candidate}), EvidenceConfig(), {root.resolve(): head})
    assert refused.value.line == 1  # HEAD's line: the configuration came from it
    assert "leads outside the manuscript's tree" in refused.value.problem


def test_one_no_log_text() -> None:
    assert plugin.NO_LOG.startswith(evidence.NO_LOG + ": ")


def test_the_line_diff_of_a_pair_is_computed_once() -> None:
    old, new = "a\nb\nc\n" * 50, "a\nB\nc\n" * 50
    assert line_opcodes(old, new) is line_opcodes(old, new)  # carried suppressions, settings, the fixtures' diff
    assert unified_lines(old, new)[:3] == ["@@ -2 +2 @@", "-b", "+B"]


def test_scan_and_the_placeholder_rules_share_the_ranges_of_a_text() -> None:
    text = texmask.mask("\\iffalse TODO 1.5\\fi \\newcommand{\\x}{TODO} \\cite{k} \\ref{a} 2.5 TODO\n")[0]
    assert texconditionals.dead_branches(text, frozenset()) is texconditionals.dead_branches(text, frozenset())
    cites = texcites.CITE_COMMANDS
    assert latex._structural_ranges(text, cites) is latex._structural_ranges(text, cites)
    assert texcites.defined(text) is texcites.defined(text)


def test_a_bib_is_parsed_once_per_content_and_never_answered_for_other_bytes(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text("@misc{alpha, title={A}}\n")
    first = bib.load_bib(path)
    assert bib.load_bib(path) is first
    info = path.stat()
    path.write_text("@misc{bravo, title={A}}\n")  # same size, mtime restored: only the bytes tell
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert set(bib.load_bib(path)[0]) == {"bravo"}


def test_a_log_rewritten_in_place_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"acc": 91.4}')
    assert logread.load_logs(["r.json"], tmp_path).attests(Decimal("91.4"))
    info = path.stat()
    path.write_text('{"acc": 92.4}')
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    log = logread.load_logs(["r.json"], tmp_path)
    assert log.attests(Decimal("92.4")) and not log.attests(Decimal("91.4"))


def test_a_compile_error_is_located_in_the_candidates_text(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "main.tex"
    head = "\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n"
    root.write_text(head)
    candidate = head.replace("Hello.", "\n\n\nHello.\n\\include{nochapter}")
    result = CompileGate(root, use_cache=False).check(candidate, PatchContext(root, head))
    lines = {v.line for v in result.violations if v.token and "nochapter" in v.token}
    assert lines == {candidate.splitlines().index("\\include{nochapter}") + 1}, result.violations


def test_the_python_side_obeys_the_timeout(tmp_path: Path) -> None:
    root = tmp_path / "main.tex"
    numbers = "\n".join(" ".join(f"{i}.{j:03d}" for j in range(12)) for i in range(60000))  # about 6 MB
    root.write_text(f"% !patchwrite log = r.json\n\\documentclass{{article}}\n\\begin{{document}}\n{numbers}\n"
                    "\\end{document}\n")  # fmt: skip
    (tmp_path / "r.json").write_text('{"acc": 91.4}')
    report = evaluate(load_manuscript(root), EvidenceConfig(timeout=1.0))
    assert report.timed_out
    for found in (report.citations, report.numbers, report.placeholders_in(None)):
        assert [v.kind for v in found or []] == ["timeout"]
    # a gate never lets a candidate through because HEAD was not judged either
    gate = EvidenceGate(root, EvidenceConfig(timeout=1.0))
    head = root.read_text()
    assert not gate.check(head + "% edit\n", PatchContext(root, head)).ok


def test_the_rerun_loop_reads_each_state_of_the_aux_file_once(tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    import shutil

    shutil.copytree(Path(__file__).parent.parent / "examples" / "paper", tmp_path / "paper")
    root = tmp_path / "paper" / "main.tex"
    opened: list[str] = []
    sys.addaudithook(
        lambda event, args: (
            opened.append(os.fsdecode(args[0]))
            if event == "open" and opened is not None and isinstance(args[0], (str, os.PathLike))
            else None
        )
    )
    opened.clear()
    report = CompileGate(root, use_cache=False, warm_starts=False).compile(root)
    aux = sum(os.path.basename(name) == "patchwrite.aux" for name in opened)
    opened = None  # type: ignore[assignment]  # the hook stays installed; it records nothing more
    assert report.ok and report.runs == 3  # engine, bibtex, engine, engine
    # per run: its state hashed once and the bibliography tool's input read once; then the tool's state and the
    # engine's record (before: 12 for these 3 runs, the input read twice a pass and each state hashed again)
    assert aux <= 2 * report.runs + 2, aux


def test_the_snapshots_boundary_is_passed_never_rebuilt(tmp_path: Path) -> None:
    """A snapshot always holds its `Boundary` (made once, from the root, when none is given); a candidate derived
    from it and the bindings file's reader use that one: a trusted boundary reads a bindings file a default one
    refuses (outside the tree), so a reader that rebuilt it from the root would refuse it."""
    from pytest_patchwrite.files.paths import Boundary
    from pytest_patchwrite.gates.binding import read_bindings
    from pytest_patchwrite.snapshot.manuscript import Manuscript

    paper = tmp_path / "paper"
    paper.mkdir()
    root = paper / "main.tex"
    root.write_text("\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n", encoding="utf-8")
    outside = tmp_path / "elsewhere" / "main.bindings.json"
    outside.parent.mkdir()
    outside.write_text('{"version": 2, "root": "main.tex", "bindings": []}\n', encoding="utf-8")
    assert Manuscript(root.resolve()).boundary == Boundary.for_root(root.resolve())
    trusted = Boundary(paper.resolve(), trusted=True)
    head = load_manuscript(root, boundary=trusted)
    candidate = head.derive({root: root.read_text(encoding="utf-8") + "% edited\n"})
    assert candidate.boundary is trusted
    text, bindings = read_bindings(outside, candidate)
    assert text is not None and bindings == []
    with pytest.raises(InputError):
        read_bindings(outside, load_manuscript(root))
