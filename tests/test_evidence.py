"""The evidence locks on real files: bibliographies through bibtexparser, logs in every format."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from support import BIB, LOG, found, paper, require_tool

from pytest_patchwrite.engine import kpse
from pytest_patchwrite.errors import InputError
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates.evidence import EvidenceConfig, EvidenceGate, evaluate
from pytest_patchwrite.gates.lognumbers import number_lock
from pytest_patchwrite.numbers.logread import load_logs
from pytest_patchwrite.snapshot.bib import load_bib, resolve_bib
from pytest_patchwrite.snapshot.manuscript import load_manuscript
from pytest_patchwrite.tex.latex import scan

EXAMPLE = Path(__file__).parent.parent / "examples" / "paper"


# (body, config, expected violations as (kind, line, token)); line numbers count the magic comment and preamble
CASES = [
    ("Accuracy 91.4\\% vs 68.2\\% \\cite{smith2020,lee2019}.", {}, []),
    ("Accuracy 91.44 and 0.914 and 91\\%.", {}, []),
    ("Accuracy 99.9\\% \\cite{smith2020}.", {}, [("cited_number", 4, "99.9\\%")]),  # the cited work's number
    ("Accuracy 99.9\\% (ours).", {}, [("unattested_number", 4, "99.9\\%")]),
    ("F1 was 88.12 and lr 0.0003.", {}, []),
    ("We use 16 layers.", {}, []),
    ("We use 16 layers.", {"numbers": "all"}, [("unattested_number", 4, "16")]),
    ("We use 12 layers.", {"numbers": "all"}, []),
    ("Accuracy 99.9\\%.", {"numbers": "off"}, []),
    ("Accuracy 91.44.", {"strict": True}, [("unattested_number", 4, "91.44")]),
    ("Baseline 68.2.", {"strict": True}, []),
    ("Accuracy 99.9. % patchwrite: ignore number", {}, []),
    ("Accuracy 99.9. % patchwrite: ignore cite", {}, [("unattested_number", 4, "99.9")]),
    ("Accuracy 99.9.", {"allow_numbers": ["99.9"]}, []),
    ("As in \\cite{fake2024}.", {}, [("unknown_cite", 4, "fake2024")]),
    ("As in \\cite{Smith2020}.", {}, [("case_mismatch", 4, "Smith2020")]),
    ("As in \\nocite{*}\\cite{proc2019}.", {}, []),
    ("As in \\cite{fake2024}. % patchwrite: ignore", {}, []),
    ("TODO: write this.", {}, [("placeholder", 4, "TODO")]),
    ("Table \\ref{t} was ??.", {}, [("placeholder", 4, "??")]),
    (
        "\\begin{tabular}{lc}\nOurs & 91.4 \\\\\nBase & 70.1 \\\\\n\\end{tabular}",
        {},
        [("unattested_number", 6, "70.1")],
    ),
]


@pytest.mark.parametrize(("body", "config", "expected"), CASES, ids=[f"{i}-{c[0][:30]}" for i, c in enumerate(CASES)])
def test_evidence_cases(tmp_path: Path, body: str, config: dict, expected: list) -> None:
    root = paper(tmp_path, body, log=LOG)
    assert found(root, **config) == expected


def test_case_mismatch_message_names_the_defined_key(tmp_path: Path) -> None:
    root = paper(tmp_path, "\\cite{Smith2020}")
    report = evaluate(load_manuscript(root), EvidenceConfig())
    assert "differs only in case from smith2020" in report.citations[0].message


def test_bibitem_defines_keys_and_no_bibliography_is_explained(tmp_path: Path) -> None:
    root = tmp_path / "main.tex"
    root.write_text(
        "\\documentclass{article}\n\\begin{document}\n\\cite{a} \\cite{b}\n"
        "\\begin{thebibliography}{9}\\bibitem{a} A.\\end{thebibliography}\n\\end{document}\n"
    )
    report = evaluate(load_manuscript(root), EvidenceConfig())
    assert [(v.token, v.line) for v in report.citations] == [("b", 3)]
    bare = tmp_path / "bare.tex"
    bare.write_text("\\documentclass{article}\n\\begin{document}\n\\cite{a}\n\\end{document}\n")
    message = evaluate(load_manuscript(bare), EvidenceConfig()).citations[0].message
    assert "no bibliography is declared" in message


def test_violations_are_located_in_input_files() -> None:
    root = EXAMPLE / "main.tex"
    manuscript = load_manuscript(root, {EXAMPLE / "sections" / "results.tex": "Accuracy was 99.9\\%~\\cite{nope}.\n"})
    report = evaluate(manuscript, EvidenceConfig())
    assert [(Path(v.file).name, v.line, v.token) for v in report.citations] == [("results.tex", 1, "nope")]
    assert [(Path(v.file).name, v.line, v.token) for v in report.numbers or []] == [("results.tex", 1, "99.9\\%")]
    assert "results.json" in report.numbers[0].message  # type: ignore[index]


def test_example_paper_is_clean() -> None:
    report = evaluate(load_manuscript(EXAMPLE / "main.tex"), EvidenceConfig())
    assert (report.citations, report.numbers, report.placeholders) == ([], [], [])
    assert report.keys_defined == 3 and [p.name for p in report.log_files] == ["results.json"]


def test_bibtexparser_failures_are_located(tmp_path: Path) -> None:
    bib = tmp_path / "broken.bib"
    bib.write_text("@article{ok, title={A}}\n\n@article{bad, title={unclosed, year=2020\n@book{after, title={B}}\n")
    keys, problems, _ = load_bib(bib)
    assert "ok" in keys and "after" in keys  # what parsed still counts
    assert [(file, line) for file, line, _ in problems] == [(str(bib), 3)]
    root = tmp_path / "main.tex"
    root.write_text(
        "\\documentclass{article}\n\\begin{document}\n\\cite{ok}\n\\bibliography{broken}\n\\end{document}\n"
    )
    report = evaluate(load_manuscript(root), EvidenceConfig())
    assert [(v.kind, Path(v.file).name, v.line) for v in report.citations][0] == ("bib_error", "broken.bib", 3)


def test_bib_string_comment_preamble_crossref(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(BIB)
    keys, problems, _ = load_bib(tmp_path / "refs.bib")
    assert set(keys) == {"smith2020", "lee2019", "proc2019"} and problems == []


def test_repeated_strings_are_fine_repeated_entries_are_listed(tmp_path: Path) -> None:
    bib = tmp_path / "d.bib"
    bib.write_text(
        '@string{j = "A"}\n@string{j = "B"}\n@misc{k, title={x}}\n@misc{k, title={y}}\n@misc{f, title={a}, title={b}}\n'
    )
    keys, problems, duplicates = load_bib(bib)
    assert set(keys) == {"k", "f"}  # a repeated field keeps its entry, as bibtex does
    assert problems == [] and duplicates == [(str(bib), 4, "k")]


def test_bib_resolved_from_the_tex_tree_with_kpsewhich(tmp_path: Path) -> None:
    require_tool("kpsewhich")
    path = resolve_bib("IEEEabrv", tmp_path, tex_tree=kpse.find)
    if path is None:
        pytest.skip("IEEEabrv.bib is not installed: apt-get install texlive-publishers")
    assert path.name == "IEEEabrv.bib" and path.is_absolute()
    assert resolve_bib("no-such-bibliography", tmp_path, tex_tree=kpse.find) is None


def test_bib_asks_the_tex_tree_only_for_a_bare_name_not_beside_the_manuscript(tmp_path: Path) -> None:
    """`resolve_bib` starts nothing: it hands the name to the lookup it is given (kpsewhich, in the sandbox)."""
    require_tool("kpsewhich")
    asked: list[tuple[str, bool]] = []

    def find(filename: str, trusted: bool) -> str | None:
        asked.append((filename, trusted))
        return kpse.find(filename, trusted)

    (tmp_path / "IEEEabrv.bib").write_text("@misc{local, title={T}}\n")  # beside the paper: never looked up
    assert resolve_bib("IEEEabrv", tmp_path, tex_tree=find) == tmp_path / "IEEEabrv.bib" and asked == []
    assert resolve_bib("sub/IEEEabrv", tmp_path, tex_tree=find) is None and asked == []  # a path: only beside
    (tmp_path / "IEEEabrv.bib").unlink()
    found = resolve_bib("IEEEabrv", tmp_path, tex_tree=find)
    assert asked == [("IEEEabrv.bib", False)]
    if found is None:
        pytest.skip("IEEEabrv.bib is not installed: apt-get install texlive-publishers")
    assert found == Path(kpse.find("IEEEabrv.bib") or "") and found.is_absolute()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("r.json", '{"a": {"b": [0.91437, "68.2%"]}}'),
        ("r.csv", "model,acc,base\nours,0.91437,68.2\n"),
        ("r.tsv", "model\tacc\tbase\nours\t0.91437\t68.2\n"),
        ("r.toml", "[main]\nacc = 0.91437\nbase = 68.2\n"),
        ("r.yaml", "main:\n  acc: 0.91437\n  base: 68.2\n"),
        ("r.txt", "epoch 10: acc=0.91437 base=68.2\n"),
        ("r.jsonl", '{"acc": 0.91437}\n{"base": 68.2}\n'),
    ],
)
def test_log_formats(tmp_path: Path, name: str, content: str) -> None:
    pytest.importorskip("yaml") if name.endswith(".yaml") else None
    (tmp_path / name).write_text(content)
    log = load_logs([name], tmp_path)
    from decimal import Decimal

    assert log.attests(Decimal("91.4")) and log.attests(Decimal("0.914")) and log.attests(Decimal("68.2"))
    assert not log.attests(Decimal("91.5")) and not log.attests(Decimal("6820"))


def test_numbers_inside_identifiers_of_a_log_attest_nothing(tmp_path: Path) -> None:
    from decimal import Decimal

    (tmp_path / "r.json").write_text('{"run": "en_sec_16", "model": "gpt2", "note": "acc was 91.4."}')
    log = load_logs(["r.json"], tmp_path)
    assert not log.attests(Decimal("16")) and not log.attests(Decimal("2"))
    assert log.attests(Decimal("91.4"))


def test_log_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{oops")
    with pytest.raises(InputError, match="bad.json:1: not valid JSON"):
        load_logs(["bad.json"], tmp_path)
    with pytest.raises(InputError, match="no experimental log matches"):
        load_logs(["missing/*.json"], tmp_path)


def test_gate_rejects_additions_but_allows_what_head_holds(tmp_path: Path) -> None:
    root = paper(tmp_path, "Old \\cite{legacy2001} and 77.7.\nLine two.", log=LOG)
    gate = EvidenceGate()
    before = root.read_bytes()
    bad = try_patch(root, "```EDIT 6 6\nLine two \\cite{hallucinated2024}.\n```", [gate])
    assert (bad.accepted, bad.stage, bad.reason) == (False, "evidence", "unknown_cite:hallucinated2024")
    assert root.read_bytes() == before
    number = try_patch(root, "```EDIT 6 6\nLine two, 99.9.\n```", [gate])
    assert number.reason == "unattested_number:99.9"
    # legacy2001 and 77.7 are in HEAD already: an edit that keeps them is fine
    ok = try_patch(root, "```EDIT 5 5\nNew \\cite{legacy2001} and 77.7 with 91.4\\%.\n```", [gate])
    assert ok.accepted, ok.violations


def test_unknown_policy_in_magic_comment(tmp_path: Path) -> None:
    root = paper(tmp_path, "x")
    root.write_text("% !patchwrite numbers = some\n" + root.read_text())
    with pytest.raises(InputError, match="unknown number policy"):
        evaluate(load_manuscript(root), EvidenceConfig())


def test_example_copy_with_placeholder_in_input(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "p")
    intro = tmp_path / "p" / "sections" / "intro.tex"
    intro.write_text(intro.read_text() + "FIXME: cite the survey.\n")
    assert found(tmp_path / "p" / "main.tex") == [("placeholder", 7, "FIXME")]


def test_a_declared_bibliography_or_log_that_does_not_exist_is_named_at_its_comment(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text("@article{a, title={T}, author={A}, year={2020}, journal={J}}\n")
    body = "\\documentclass{article}\n\\begin{document}\nSee \\cite{a}.\n\\bibliography{refs}\n\\end{document}\n"
    root = tmp_path / "main.tex"
    for declared, hint in (("nonexist.bib", "no such file exists"), ("refs", "did you mean refs.bib?")):
        root.write_text(f"% !patchwrite bib = {declared}\n" + body)
        report = evaluate(load_manuscript(root), EvidenceConfig())
        found = [v for v in report.citations if v.kind == "missing_bib"]
        assert [(Path(v.file).name, v.line, v.token) for v in found] == [("main.tex", 1, declared)], report.citations
        assert hint in found[0].message
    root.write_text("% !patchwrite log = results.json\n" + body)
    with pytest.raises(InputError, match="declares the experimental log results.json") as caught:
        evaluate(load_manuscript(root), EvidenceConfig())
    assert caught.value.line == 1 and Path(caught.value.path).name == "main.tex"


def test_the_number_lock_says_which_logs_it_reads_and_judges_by_the_pool(tmp_path: Path) -> None:
    """What a timeout names comes from the number lock itself, before it reads; the policy `off` reads the pool
    (the logs are still listed) and judges nothing."""
    manuscript = load_manuscript(paper(tmp_path, "Accuracy 99.9\\% and 91.4\\%.", log=LOG))
    config = EvidenceConfig().for_manuscript(manuscript)
    scans = [scan(manuscript.texts[path], str(path)) for path in manuscript.files]
    heard: list[str] = []
    numbers = number_lock(manuscript, scans, config, manuscript.root_text, (None, True), heard.append)
    size = (tmp_path / "results.json").stat().st_size / (1 << 20)
    assert heard == [f"while the number locks read results.json ({size:.0f} MB)"]
    assert [(v.kind, v.token) for v in numbers.found or []] == [("unattested_number", "99.9\\%")]
    assert (numbers.pool_only, numbers.bindings_file) == (1, None)
    assert numbers.log is not None and [p.name for p in numbers.log.files] == ["results.json"]
    off_config = replace(config, numbers="off")
    off = number_lock(manuscript, scans, off_config, manuscript.root_text, (None, True), heard.append)
    assert off.found is None and off.log is not None and off.log.files == numbers.log.files
