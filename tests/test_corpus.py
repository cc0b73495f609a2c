"""The fault corpus: every HEAD passes, every injector breaks what it says, the stress table's pattern."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import require_ctex, require_tool

from pytest_patchwrite.corpus import CONTENT_FAULTS, DOCUMENTS, FAULTS, FaultNotApplicable, inject, materialize
from pytest_patchwrite.corpus.faults import INJECTORS, sites
from pytest_patchwrite.corpus.stress import CONDITIONS, StressOptions, run_stress
from pytest_patchwrite.edit import apply_edit
from pytest_patchwrite.gates.compile import CompileGate
from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

EXAMPLE = Path(__file__).parent.parent / "examples" / "paper"

# which check catches each content-class fault at HEAD; swapped_acc is the paper's named boundary:
# both values are attested, so no gate sees it, only the fault's own strict check does
CAUGHT_BY = {"fake_cite": "citations", "bad_number": "numbers", "todo": "placeholders", "swapped_acc": "fixed"}


def test_corpus_shape() -> None:
    assert len(DOCUMENTS) == 24
    assert sum(d.language == "en" for d in DOCUMENTS.values()) == 16
    doc = DOCUMENTS["en_vision_01"]
    assert (doc.title, doc.accuracy, doc.baseline) == ("Patch-Level Robustness in Vision Encoders", "91.4", "68.2")
    for doc in DOCUMENTS.values():
        head = doc.head()
        numbers = {n.text for n in evaluate_scan(head)}
        assert numbers == {"12", str(doc.epochs), str(doc.batch), doc.accuracy, doc.baseline}, doc.id
        assert "The encoder uses 12 layers and a frozen tokenizer~\\cite{smith2020}." in head
        assert doc.head() == head  # deterministic


def evaluate_scan(text: str):
    from pytest_patchwrite.tex.latex import scan

    return scan(text).numbers


BUILDS = [(d, "surrogate") for d in sorted(DOCUMENTS)] + [
    (d, "ctex")
    for d in sorted(DOCUMENTS)
    if DOCUMENTS[d].language == "zh"  # the real ctexart build
]


@pytest.mark.parametrize(("doc_id", "build"), BUILDS, ids=[f"{d}-{b}" for d, b in BUILDS])
def test_every_head_compiles_and_passes(tmp_path: Path, doc_id: str, build: str) -> None:
    doc = DOCUMENTS[doc_id]
    if build == "ctex":
        require_ctex()
    else:
        require_tool("pdflatex")
    root = materialize(doc, tmp_path, build)
    report = CompileGate(use_cache=False).compile(root)
    assert report.ok, report.violations
    assert report.engine == ("xelatex" if build == "ctex" else "pdflatex")
    assert report.warnings("undefined_citation") == []
    evidence = evaluate(load_manuscript(root), EvidenceConfig(numbers="all"))
    assert (evidence.citations, evidence.numbers, evidence.placeholders) == ([], [], [])


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("doc_id", sorted(DOCUMENTS))
def test_oracle_repair_restores_bytes_outside_its_span(doc_id: str, fault: str) -> None:
    head = DOCUMENTS[doc_id].head()
    injected = inject(head, fault)
    assert injected.broken != head and not injected.fixed(injected.broken)
    edit = injected.oracle_edit()
    repaired = apply_edit(injected.broken, edit)
    assert injected.fixed(repaired)
    if injected.original is not None:
        assert repaired == head
    else:  # an inserted line becomes a comment: every other line is HEAD's
        lines = repaired.split("\n")
        assert lines[edit.start - 1] == "%"
        assert "\n".join(lines[: edit.start - 1] + lines[edit.start :]) == head


def test_injector_breaks_what_it_says(fault_case) -> None:
    """Run over the 192 corpus jobs by the fault_case fixture."""
    require_tool("pdflatex")
    compile_gate, evidence_gate = fault_case.gates[:2]
    report = compile_gate.compile(fault_case.path)
    if fault_case.name not in CONTENT_FAULTS:
        assert not report.ok
        assert report.violations[0].line > 0
        return
    assert report.ok, report.violations
    evidence = evaluate(load_manuscript(fault_case.path), evidence_gate.config)
    caught = {
        "citations": [v.token for v in evidence.citations],
        "numbers": [v.token for v in evidence.numbers or []],
        "placeholders": [v.token for v in evidence.placeholders],
    }
    check = CAUGHT_BY[fault_case.name]
    if check == "fixed":
        assert not any(caught.values()) and not fault_case.fixed()
    else:
        assert caught[check], caught
        assert all(not found for name, found in caught.items() if name != check)
    assert fault_case.note and "line" in fault_case.note.lower()


def test_reduced_stress_reproduces_the_table(tmp_path: Path) -> None:
    require_tool("pdflatex")
    summary = run_stress(["en_vision_01", "zh_med_09"], StressOptions(), tmp_path, workers=2)
    expected = {
        "po_slot": (1.0, 1.0, 1.0, 1.0, 0.6667, 0.0),
        "patchwrite": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        "patchwrite_nocompile": (0.0, 0.0, None, 1.0, 1.0, 1.0),
        "patchwrite_nogate": (1.0, 1.0, 0.0, 0.6667, 1.0, 1.0),
        "po_slot_strict": (0.0, 1.0, 0.0, 1.0, 1.0, 1.0),
    }
    keys = ("accept", "compile_ok", "gate_ok", "cite_jaccard", "numeric_jaccard", "layers_preserved")

    def pattern(cells: dict) -> dict:
        return {name: tuple(cell[k] for k in keys) for name, cell in cells.items()}

    assert summary["n_jobs"] == 2 * 8 * len(CONDITIONS)
    assert pattern(summary["conditions"]) == expected
    slices = json.loads((tmp_path / "slices.json").read_text())
    for key, values in (("fault", FAULTS), ("fault_class", ("content", "compile")), ("language", ("en", "zh"))):
        assert set(slices[key]) == set(values)
        for value in values:
            assert pattern(slices[key][value]) == expected, (key, value)
    jobs = [json.loads(line) for line in (tmp_path / "jobs.jsonl").read_text().splitlines()]
    assert len(jobs) == summary["n_jobs"]
    fixed = {j["condition"]: j["fault_fixed"] for j in jobs if j["fault"] == "fake_cite"}
    assert fixed["patchwrite"] and fixed["po_slot"] and not fixed["patchwrite_nocompile"]


def test_the_detection_pass_is_opt_in_and_leaves_the_table_alone(tmp_path: Path) -> None:
    require_tool("pdflatex")
    cli = [sys.executable, "-m", "pytest_patchwrite.cli", "stress", "--docs", "en_vision_01", "--faults",
           "swapped_acc,broken_math", "--conditions", "patchwrite,po_slot", "-j", "1"]  # fmt: skip
    plain = subprocess.run([*cli, "--out", str(tmp_path / "plain")], capture_output=True, text=True)
    detected = subprocess.run([*cli, "--out", str(tmp_path / "detected"), "--detection"], capture_output=True,
                              text=True)  # fmt: skip
    assert plain.returncode == detected.returncode == 0, plain.stderr + detected.stderr
    table = plain.stdout.splitlines()[:-1]  # the last line is the wall time
    assert len(table) == 3 and detected.stdout.splitlines()[:-1] == table
    without = json.loads((tmp_path / "plain" / "summary.json").read_text())
    found = json.loads((tmp_path / "detected" / "summary.json").read_text())
    assert "detection" not in without and _timeless(found["conditions"]) == _timeless(without["conditions"])
    faults = found["detection"]["faults"]
    assert set(faults) == set(CONTENT_FAULTS) and found["detection"]["manuscripts"] == 1
    # the paper's named limit: the pool rule misses swapped_acc, the clean HEAD's bindings catch it
    assert faults["swapped_acc"] == {"n": 1, "pool": 0.0, "bindings": 1.0}
    assert faults["fake_cite"]["pool"] == faults["todo"]["pool"] == 1.0
    slices = [json.loads((tmp_path / out / "slices.json").read_text()) for out in ("plain", "detected")]
    assert _timeless(slices[0]) == _timeless(slices[1])
    rows = [[json.loads(line) for line in (tmp_path / out / "jobs.jsonl").read_text().splitlines()]
            for out in ("plain", "detected")]  # fmt: skip
    assert len(rows[0]) == 4 and [_timeless(r) for r in rows[0]] == [_timeless(r) for r in rows[1]]


def _timeless(data: object) -> object:
    if isinstance(data, dict):
        return {k: _timeless(v) for k, v in data.items() if k not in ("seconds", "mean_seconds")}
    return data


@pytest.mark.parametrize("fault", FAULTS)
def test_injectors_work_on_any_manuscript(tmp_path: Path, fault: str) -> None:
    results = EXAMPLE / "sections" / "results.tex"
    injected = inject(results.read_text(), fault)
    assert injected.broken != injected.head
    repaired = apply_edit(injected.broken, injected.oracle_edit())
    assert injected.fixed(repaired) and not injected.fixed(injected.broken)


def test_inject_cli(tmp_path: Path) -> None:
    out = tmp_path / "broken.tex"
    cli = [sys.executable, "-m", "pytest_patchwrite.cli", "inject"]
    results = EXAMPLE / "sections" / "results.tex"
    proc = subprocess.run([*cli, str(results), "--fault", "todo", "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().splitlines()[0] == "TODO: check these results."
    assert "todo (content)" in proc.stderr
    # the example's root holds only \input lines: the site is in a file it reads, named on stderr
    proc = subprocess.run([*cli, str(EXAMPLE / "main.tex"), "--fault", "todo"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "sections/results.tex:1: todo (content)" in proc.stderr
    assert proc.stdout.splitlines()[0] == "TODO: check these results."
    plain = tmp_path / "plain.tex"
    plain.write_text("\\documentclass{article}\n\\begin{document}\nNo citations here.\n\\end{document}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", "inject", str(plain), "--fault", "fake_cite"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "cites nothing" in proc.stderr and "plain.tex" in proc.stderr
    with pytest.raises(FaultNotApplicable, match="unknown fault"):
        inject("x", "nonsense")


# a section, a number and a citation TeX never typesets (\iffalse), then one of each it does
UNSURE_AND_SURE = (
    "\\documentclass{article}\n\\begin{document}\n\\iffalse\n\\section{Hidden} 12.5 \\cite{h}\n\\fi\n\n"
    "\\section{Shown}\nWe got 91.4 and 68.2 \\cite{a} \\cite{b}.\n\\end{document}\n"
)


def test_each_fault_has_one_injector_and_each_skips_what_tex_may_not_typeset() -> None:
    assert set(INJECTORS) == set(FAULTS)
    shown = "We got 91.4 and 68.2 \\cite{a} \\cite{b}."
    expected = {
        "fake_cite": [(8, shown.replace("{b}", "{fake2024}")), (8, shown.replace("{a}", "{fake2024}"))],
        "bad_number": [(8, shown.replace("91.4", "99.9")), (8, shown.replace("68.2", "99.9"))],
        "todo": [(7, "TODO: check these results.")],
        "swapped_acc": [(8, "We got 68.2 and 91.4 \\cite{a} \\cite{b}.")],
        "broken_math": [(8, shown.replace("91.4", "$91.4")), (8, shown.replace("68.2", "$68.2"))],
        "unmatched_brace": [(8, shown.replace("\\cite{b}", "{\\cite{b}"))],  # once per line: its last command
        "unclosed_env": [(6, "\\begin{quote}")],  # on the line before the section
        "undefined_cmd": [(7, "\\patchwriteundefined")],
    }
    assert {name: [(f.line, f.faulty) for f in sites(UNSURE_AND_SURE, name)] for name in FAULTS} == expected


@pytest.mark.parametrize("doc_id", sorted(DOCUMENTS))
def test_number_lock_alone_rejects_the_slot_rewrite(tmp_path: Path, doc_id: str) -> None:
    from pytest_patchwrite.corpus.stress import slot_rewrite
    from pytest_patchwrite.gates.evidence import EvidenceGate
    from pytest_patchwrite.model import PatchContext

    head = DOCUMENTS[doc_id].head()
    root = materialize(DOCUMENTS[doc_id], tmp_path)
    result = EvidenceGate(root, EvidenceConfig(numbers="all")).check(slot_rewrite(head), PatchContext(root, head))
    assert [(v.kind, v.token) for v in result.violations] == [("unattested_number", "16")]
    assert EvidenceGate(root).check(slot_rewrite(head), PatchContext(root, head)).ok  # decimals: 16 is not checked


def test_an_unknown_document_id_lists_the_ids(tmp_path: Path) -> None:
    """`stress --docs en_nlp_01` named the wrong id and no right one: a new user had to read the source."""
    proc = subprocess.run([sys.executable, "-m", "pytest_patchwrite.cli", "stress", "--out", "unused", "--docs",
                           "en_nlp_01"], cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "unknown corpus document(s) en_nlp_01; the ids are en_vision_01, en_nlp_02" in proc.stderr, proc.stderr
    assert "zh_thesis_16" in proc.stderr and not (tmp_path / "unused").exists()
