"""Warm starts: a candidate compiled from HEAD's settled auxiliary files gets the verdict of a cold check.

Every comparison runs the real engine twice, warm and cold, with the verdict cache off.
`PATCHWRITE_WARM_CORPUS=all` compares all 24 manuscripts x 8 faults (and the 8 Chinese-venue
ones also as real ctexart builds) instead of a sample: every fault once under pdflatex, two under xelatex.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import require_ctex, require_tool

from pytest_patchwrite.corpus import DOCUMENTS, FAULTS, FaultNotApplicable, inject, materialize
from pytest_patchwrite.edit import apply_edit
from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates import confirm, fontmap, warm
from pytest_patchwrite.gates.compile import CompileGate
from pytest_patchwrite.gates.report import CompileReport
from pytest_patchwrite.model import PatchContext

EXAMPLES = Path(__file__).parent.parent / "examples"


@pytest.fixture(autouse=True)
def _fresh_store() -> None:
    """Each test starts with no state kept in this process, so a warm start is the one this test made."""
    warm.STORE.clear()


def verdict(report: CompileReport) -> tuple[object, ...]:
    """Return what a check decides: pass or fail, the located violations, and after a pass every log message
    (the undefined citations and references the citations item reports)."""
    return report.ok, report.violations, report.messages if report.ok else None


def compare(gate: CompileGate, root: Path, overrides: dict[Path, str]) -> CompileReport:
    """Return the warm report after asserting its verdict equals a cold check's."""
    warm_report = gate.compile(root, overrides)
    cold = gate.compile(root, overrides, warm_start=False)
    assert cold.start == "cold"
    assert verdict(warm_report) == verdict(cold)
    return warm_report


@pytest.fixture
def paper(tmp_path: Path) -> tuple[CompileGate, Path, Path]:
    require_tool("pdflatex")
    require_tool("bibtex")
    shutil.copytree(EXAMPLES / "paper", tmp_path / "paper")
    root = tmp_path / "paper" / "main.tex"
    gate = CompileGate(root, use_cache=False)
    head = gate.compile(root)
    assert (head.ok, head.start, head.runs) == (True, "cold", 3)  # engine, bibtex, engine, engine
    return gate, root, tmp_path / "paper" / "sections" / "results.tex"


TABLE = "\\begin{table}[t]"


def edits(text: str) -> dict[str, str]:
    table = text[text.index(TABLE) : text.index("\\end{table}") + len("\\end{table}")]
    return {
        "one_line": text.replace("lists the occlusion study", "reports the occlusion study"),
        "add_citation": text.replace("over 3 seeds.", "over 3 seeds, as in~\\citet{garcia2021}."),
        "undefined_citation": text.replace("over 3 seeds.", "over 3 seeds~\\citep{nobody2030}."),
        "add_label": text.replace("over 3 seeds.", "over 3 seeds.\\label{sec:seeds} See Section~\\ref{sec:seeds}."),
        "move_figure": text.replace(table, "").replace("\\label{sec:results}\n", f"\\label{{sec:results}}\n{table}\n"),
        "break_compile": text.replace("over 3 seeds.", "over 3 $seeds."),
    }


@pytest.mark.parametrize("name", ["one_line", "add_citation", "undefined_citation", "add_label", "move_figure",
                                  "break_compile"])  # fmt: skip
def test_warm_verdict_equals_cold(paper: tuple[CompileGate, Path, Path], name: str) -> None:
    gate, root, results = paper
    candidate = edits(results.read_text())[name]
    report = compare(gate, root, {results: candidate})
    expected = {
        "one_line": ("warm", 1, True),  # the point: one engine run instead of three and bibtex
        "add_citation": ("warm+", 2, True),  # a new key: bibtex, then one more run
        "undefined_citation": ("warm+", 2, True),
        "add_label": ("warm+", 2, True),  # the .aux changed: one more run settles it
        "move_figure": ("warm", 1, True),
        "break_compile": ("warm", 1, False),
    }[name]
    assert (report.start, report.runs, report.ok) == expected


def test_gate_check_and_try_patch_start_warm(paper: tuple[CompileGate, Path, Path]) -> None:
    gate, root, results = paper
    head = results.read_text()
    candidate = head.replace("lists the occlusion study", "reports the occlusion study")
    assert gate.check(candidate, PatchContext(results, head)).ok
    line = head.splitlines().index(next(ln for ln in head.splitlines() if "lists the" in ln)) + 1
    fresh = CompileGate(root, use_cache=False)  # a new gate object: the state is kept per process, not per gate
    result = try_patch(results, f"```EDIT {line} {line}\nTable~\\ref{{tab:main}} reports 3 seeds.\n```", [fresh])
    assert result.accepted
    assert fresh.compile(root).start == "warm"  # the committed text is HEAD now: its state was kept


def test_changed_bibliography_runs_the_tool(paper: tuple[CompileGate, Path, Path]) -> None:
    gate, root, _ = paper
    bib = root.parent / "refs.bib"
    candidate = bib.read_text().replace("{2019}", "{2018}", 1)
    assert candidate != bib.read_text()
    report = compare(gate, root, {bib: candidate})
    assert report.start == "warm+"  # the .aux asked for nothing new, but the .bbl was made from the old .bib


def compiled_head(directory: Path, text: str) -> tuple[CompileGate, Path]:
    """Return a gate and the root `directory/main.tex` holding `text`, after a passing HEAD compile kept its state."""
    require_tool("pdflatex")
    root = directory / "main.tex"
    root.write_text(text)
    gate = CompileGate(root, use_cache=False)
    assert gate.compile(root).ok
    return gate, root


def test_a_file_the_candidate_stops_writing_falls_back(tmp_path: Path) -> None:
    body = "\\section{One}\\label{one}See~\\ref{one}.\n\\section{Two}\nText.\n\\end{document}\n"
    gate, root = compiled_head(tmp_path, "\\documentclass{article}\n\\begin{document}\n\\tableofcontents\n" + body)
    # without \tableofcontents a cold check never writes the .toc; the kept one must not stand in for it
    report = compare(gate, root, {root: "\\documentclass{article}\n\\begin{document}\n" + body})
    assert report.start == "fallback"


def test_an_error_inside_a_kept_file_falls_back(tmp_path: Path) -> None:
    head = (
        "\\documentclass{article}\n\\DeclareRobustCommand{\\ds}{ImageNet}\n\\begin{document}\n\\tableofcontents\n"
        "\\section{Results on \\ds}\nText.\n\\end{document}\n"
    )
    gate, root = compiled_head(tmp_path, head)
    # the kept .toc still says \ds; a cold check never reads it and passes
    candidate = head.replace("\\DeclareRobustCommand{\\ds}{ImageNet}\n", "").replace("on \\ds", "on ImageNet")
    report = compare(gate, root, {root: candidate})
    assert (report.start, report.ok) == ("fallback", True)


def test_a_first_run_error_hidden_by_heads_aux_falls_back(tmp_path: Path) -> None:
    head = (
        "\\documentclass{article}\n\\makeatletter\n\\AtEndDocument{\\immediate\\write\\@mainaux{\\gdef\\string\\pwok{ok}}}\n"
        "\\makeatother\n\\begin{document}\nHello.\n\\end{document}\n"
    )
    gate, root = compiled_head(tmp_path, head)
    # HEAD's .aux defines \pwok: a warm run never errs, a cold first run stops at \undefinedmacroxyz
    candidate = head.replace("Hello.", "Hello. \\ifx\\pwok\\undefined\\undefinedmacroxyz\\fi")
    report = compare(gate, root, {root: candidate})
    assert (report.start, report.ok, report.violations[0].kind) == ("fallback", False, "undefined_control_sequence")
    assert (gate.confirmations, gate.confirmations_failed) == (1, 1)
    # a candidate whose first cold run is clean keeps its warm start, confirmed by that one run
    assert compare(gate, root, {root: head.replace("Hello.", "Hello there.")}).start == "warm"
    assert (gate.confirmations, gate.confirmations_failed) == (2, 1)


PWOK = (
    "\\documentclass{article}\n\\makeatletter\n\\AtEndDocument{\\immediate\\write\\@mainaux{\\gdef\\string\\pwok{ok}}}\n"
    "\\makeatother\n\\begin{document}\nHello.\n\\end{document}\n"
)


def test_the_confirmation_runs_beside_or_after_the_warm_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for cores in (1, 2):  # one core: after the warm run; more: beside it
        monkeypatch.setattr(confirm, "cores", lambda cores=cores: cores)
        (tmp_path / str(cores)).mkdir()
        warm.STORE.clear()
        gate, root = compiled_head(tmp_path / str(cores), PWOK)
        candidate = PWOK.replace("Hello.", "Hello. \\ifx\\pwok\\undefined\\undefinedmacroxyz\\fi")
        assert compare(gate, root, {root: candidate}).start == "fallback"
        assert compare(gate, root, {root: PWOK.replace("Hello.", "Hello there.")}).start == "warm"
        assert (gate.confirmations, gate.confirmations_failed) == (2, 1)


def test_a_warm_failure_that_only_heads_aux_causes_falls_back(tmp_path: Path) -> None:
    writes = "\\AtEndDocument{\\immediate\\write\\@mainaux{\\gdef\\string\\pwbad{\\string\\undefinedmacroxyz}}}\n"
    gate, root = compiled_head(tmp_path, PWOK.replace("\\makeatother", writes + "\\makeatother"))
    # the candidate stops writing \pwbad and expands it when defined: HEAD's .aux defines it, a cold check never does
    candidate = PWOK.replace("Hello.", "Hello. \\ifx\\pwbad\\undefined\\else\\pwbad\\fi")
    report = compare(gate, root, {root: candidate})
    assert (report.start, report.ok) == ("fallback", True)


def test_a_prose_only_edit_can_reach_code_that_tests_heads_aux(tmp_path: Path) -> None:
    # why no edit is exempt from the confirmation: HEAD's own code errs without its .aux only past page one
    trap = "\\par\\ifnum\\value{page}>1 \\ifx\\pwok\\undefined\\undefinedmacroxyz\\fi\\fi\n\\end{document}"
    head = PWOK.replace("\\end{document}", trap)
    gate, root = compiled_head(tmp_path, head)
    prose = " ".join(["words of plain prose"] * 300)  # no command, no special character: two pages
    report = compare(gate, root, {root: head.replace("Hello.", prose)})
    assert (report.start, report.ok, report.violations[0].kind) == ("fallback", False, "undefined_control_sequence")


def test_a_font_only_a_cold_run_embeds_is_confirmed_in_a_normal_run(tmp_path: Path) -> None:
    # draft mode embeds no font: this candidate's cold first run fails on writing the PDF alone
    gate, root = compiled_head(tmp_path, PWOK)
    candidate = PWOK.replace("Hello.", "Hello. \\ifx\\pwok\\undefined\\pdfmapline{=cmr10 CMR10 <./nofont.pfb}\\fi")
    report = compare(gate, root, {root: candidate})
    assert (report.start, report.ok) == ("fallback", False)
    assert gate.maps_cut == 0  # a manuscript that names map lines gets the whole map (gates.fontmap)


def test_a_warm_run_reads_the_font_map_cut_to_heads_fonts(paper: tuple[CompileGate, Path, Path]) -> None:
    gate, root, results = paper
    state = warm.STORE.get("", f"pdflatex:{root}", None)
    assert state is not None and state.fonts is not None
    whole = Path(state.fonts.map_file).read_bytes().count(b"\n")
    cut = fontmap.cut(state.fonts, {})
    assert cut is not None and 0 < cut.data.count(b"\n") < whole / 100
    assert b"\ncmr10 CMR10 <cmr10.pfb\n" in b"\n" + cut.data  # the whole map's own lines, as they are
    report = compare(gate, root, {results: edits(results.read_text())["one_line"]})
    assert (report.start, gate.maps_cut, gate.maps_void) == ("warm", 1, 0)


PLAIN = "\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n"


@pytest.mark.parametrize(
    ("words", "start"),
    [
        ("{\\small Small.}", "warm"),  # cmr9: a size of a family HEAD uses, kept in the cut map
        ("\\textsf{Sans.}", "fallback"),  # cmss10: no line in the cut map, so a bitmap font or a pdfTeX error
        ("\\usepackage{xcolor}", "fallback"),  # a package HEAD did not read could add map lines
    ],
)
def test_a_font_heads_run_did_not_use_voids_the_cut_map(tmp_path: Path, words: str, start: str) -> None:
    gate, root = compiled_head(tmp_path, PLAIN)
    candidate = PLAIN.replace("Hello.", f"Hello. {words}")
    if words.startswith("\\usepackage"):
        candidate = PLAIN.replace("\\begin{document}", f"{words}\n\\begin{{document}}")
    report = compare(gate, root, {root: candidate})
    assert (report.start, report.ok, gate.maps_cut) == (start, True, 1)
    assert gate.maps_void == (start == "fallback")


def test_bitmap_fonts_from_the_cache_keep_the_cut_map(tmp_path: Path) -> None:
    # T1 without cm-super: the EC fonts are bitmaps, made by the first job and then read from the font cache
    head = PLAIN.replace("\\begin{document}", "\\usepackage[T1]{fontenc}\n\\begin{document}")
    gate, root = compiled_head(tmp_path, head)
    assert gate.compile(root).ok  # HEAD again: its state now names the fonts as the cache holds them
    state = warm.STORE.get("", f"pdflatex:{root}", None)
    assert state is not None and state.fonts is not None and "ecrm1000" in state.fonts.metrics
    report = compare(gate, root, {root: head.replace("Hello.", "Hello, world.")})
    assert (report.start, report.ok, gate.maps_cut, gate.maps_void) == ("warm", True, 1, 0)


def test_font_use_is_kept_with_the_state_on_disk(tmp_path: Path) -> None:
    use = fontmap.FontUse("/var/lib/texmf/fonts/map/pdftex/updmap/pdftex.map", ("cmr12",), ("cmr12.pfb",), ("/a",))
    state = warm.WarmState({"patchwrite.aux": b"\\relax\n"}, {"main.tex": b"x" * 32}, None, use)
    assert warm.WarmState.from_json(state.to_json()) == state
    old = {k: v for k, v in state.to_json().items() if k != "fonts"}  # a state kept before font maps were cut
    assert warm.WarmState.from_json(old).fonts is None
    assert fontmap.FontUse.from_json({"map": 3, "metrics": [], "font_files": [], "reads": []}) is None


def test_a_run_that_writes_into_a_shared_input_voids_the_confirmation(tmp_path: Path) -> None:
    (tmp_path / "data.tex").write_text("Data.\n")
    head = PWOK.replace("Hello.", "Hello. \\input{data.tex}")
    gate, root = compiled_head(tmp_path, head)
    writes = "\\newwrite\\w\\immediate\\openout\\w=data.tex\\immediate\\write\\w{Fresh.}\\immediate\\closeout\\w"
    report = compare(gate, root, {root: head.replace("Hello.", "Hello. " + writes)})
    # the two job directories share data.tex's inode: a write into it leaves nothing to compare
    assert (report.start, report.ok) == ("fallback", True)
    assert (tmp_path / "data.tex").read_text() == "Data.\n"


def test_linked_trees_tell_a_write_into_a_shared_file(tmp_path: Path) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    (source / "sub").mkdir(parents=True)
    (source / "sub" / "x.tex").write_text("x")
    (source / "link").symlink_to("sub/x.tex")
    linked = confirm.link_tree(source, target)
    linked.seal()
    assert (target / "sub" / "x.tex").read_text() == "x" and (target / "link").is_symlink()
    assert linked.intact()
    (source / "sub" / "new.aux").write_text("new files are private")
    assert linked.intact()
    (source / "sub" / "x.tex").write_text("y")  # through the other name: the same inode
    assert not linked.intact()


def test_biblatex_with_biber(tmp_path: Path) -> None:
    require_tool("biber")
    shutil.copy(EXAMPLES / "paper" / "refs.bib", tmp_path / "refs.bib")
    head = (
        "\\documentclass{article}\n\\usepackage[backend=biber]{biblatex}\n\\addbibresource{refs.bib}\n"
        "\\begin{document}\nAs shown by~\\cite{smith2020}.\n\nMore text.\n\\printbibliography\n\\end{document}\n"
    )
    gate, root = compiled_head(tmp_path, head)
    assert compare(gate, root, {root: head.replace("More text.", "More words.")}).start == "warm"
    assert compare(gate, root, {root: head.replace("More text.", "See~\\cite{lee2019}.")}).start == "warm+"


def test_no_warm_start_for_build_files_the_loop_does_not_know(tmp_path: Path) -> None:
    gate, root = compiled_head(
        tmp_path,
        "\\documentclass{article}\n\\begin{document}\n\\newwrite\\w\\immediate\\openout\\w=notes.dat\n"
        "\\immediate\\write\\w{x}\\immediate\\closeout\\w\nText.\n\\end{document}\n",
    )
    assert gate.compile(root).start == "cold"  # notes.dat could feed a later run: no state was kept


def _corpus_jobs() -> list[tuple[str, str, str]]:
    surrogate = sorted(d for d in DOCUMENTS)
    ctex = sorted(d for d in DOCUMENTS if DOCUMENTS[d].language == "zh")
    if os.environ.get("PATCHWRITE_WARM_CORPUS") == "all":
        docs = [(d, "surrogate") for d in surrogate] + [(d, "ctex") for d in ctex]
        return [(d, b, f) for d, b in docs for f in FAULTS]
    # every fault once under pdflatex, each on another manuscript; xelatex (ctexart, 8 s a job here) for one
    # content-class and one compile-class fault
    return [(surrogate[i * 3], "surrogate", f) for i, f in enumerate(FAULTS)] + [
        (ctex[0], "ctex", "fake_cite"),
        (ctex[1], "ctex", "broken_math"),
    ]


@pytest.mark.parametrize(("doc_id", "build", "fault"), _corpus_jobs(), ids=lambda v: str(v))
def test_corpus_warm_equals_cold(tmp_path: Path, doc_id: str, build: str, fault: str) -> None:
    if build == "ctex":
        require_ctex()
    else:
        require_tool("pdflatex")
    doc = DOCUMENTS[doc_id]
    head = doc.head(build)
    root = materialize(doc, tmp_path, build)
    gate = CompileGate(root, use_cache=False)
    assert gate.compile(root).ok
    try:
        injected = inject(head, fault)
    except FaultNotApplicable as exc:
        pytest.skip(str(exc))
    repaired = apply_edit(injected.broken, injected.oracle_edit())
    for candidate in (injected.broken, repaired):
        report = compare(gate, root, {root: candidate})
        assert report.start != "cold"  # every candidate started from HEAD's state


def test_fixtures_start_warm_from_the_plugins_head_compile_of_an_earlier_run(pytester: pytest.Pytester) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    shutil.copytree(EXAMPLES / "paper", pytester.path / "paper")
    pytester.runpytest_subprocess("paper").assert_outcomes(passed=4)  # HEAD compiled; its state kept on disk
    pytester.makeini("[pytest]\npatchwrite_collect = false\n")
    pytester.makepyfile(
        test_agent="""
        from pathlib import Path
        from pytest_patchwrite.model import PatchContext

        def test_candidate_starts_warm(manuscript):
            doc = manuscript(Path("paper/main.tex").resolve())  # a copy elsewhere: the same bytes
            results = doc.directory / "sections" / "results.tex"
            head = results.read_text()
            candidate = head.replace("lists the occlusion study", "reports the occlusion study")
            gate = next(g for g in doc.gates if g.stage == "compile")
            verdict = gate.check(candidate, PatchContext(results, head))
            assert verdict.ok
            assert (verdict.details["start"], verdict.details["runs"]) == ("warm", 1)
        """
    )
    pytester.runpytest_subprocess("test_agent.py").assert_outcomes(passed=1)  # a new process: the disk tier


def test_store_is_bounded_and_survives_a_bad_file_on_disk(tmp_path: Path) -> None:
    store = warm.StateStore(size=2, per_root=2)
    state = warm.WarmState({"patchwrite.aux": b"\\relax\n"}, {"main.tex": b"x" * 32}, None)
    for n in range(5):
        store.put(f"{n:02d}" * 32, f"pdflatex:/paper{n}/main.tex", state, tmp_path)
    assert store.get("00" * 32, "pdflatex:/paper0/main.tex", None) is None  # evicted from memory
    assert store.get("04" * 32, "pdflatex:/elsewhere/main.tex", None) == state  # the same bytes elsewhere
    assert store.get("00" * 32, "pdflatex:/paper0/main.tex", tmp_path) == state  # read back from disk
    # one manuscript's candidates do not push out its HEAD, nor crowd out the other manuscripts
    head = warm.WarmState({"patchwrite.aux": b"head"}, {}, None)
    store.put("aa" * 32, "pdflatex:/busy/main.tex", head, None)
    for n in range(5):
        assert store.get("aa" * 32, "pdflatex:/busy/main.tex", None) == head
        store.put(f"b{n}" * 32, "pdflatex:/busy/main.tex", state, None)
    assert store.get("aa" * 32, "pdflatex:/busy/main.tex", None) == head
    assert store.get("b0" * 32, "pdflatex:/other/main.tex", None) is None  # older candidates dropped: 2 a root
    assert store.get("b4" * 32, "pdflatex:/other/main.tex", None) == state
    (tmp_path / "ff" / f"{'ff' * 32}.json").parent.mkdir()
    for junk in ("not json", '{"files": [1, 2]}', '{"files": {"a": "%%%"}, "sources": {}, "bib_read": null}'):
        (tmp_path / "ff" / f"{'ff' * 32}.json").write_text(junk)
        assert store.get("ff" * 32, "pdflatex:/x/main.tex", tmp_path) is None
