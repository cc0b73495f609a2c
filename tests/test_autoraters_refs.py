"""References, offline matching and Citation F1 (both modes) on hand-computed cases and TeX Live's real bib."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.autoraters.citation_metrics import citation_f1, macro_average, parse_partition
from pytest_patchwrite.autoraters.matching import match_references
from pytest_patchwrite.autoraters.references import Reference, load_references, normalize_title
from pytest_patchwrite.cli import main
from pytest_patchwrite.errors import InputError


def ref(num: int, title: str, year: str = "2020", doi: str | None = None, arxiv: str | None = None) -> Reference:
    return Reference(num, f"k{num}", title, [], year, "", doi, arxiv, norm_title=normalize_title(title))


TITLES = ["Alpha networks", "Beta priors for everything", "Gamma rays in vision", "Delta encoders",
          "Epsilon greedy agents", "Zeta functions revisited"]  # fmt: skip


def refs(*indexes: int) -> list[Reference]:
    return [ref(n, TITLES[i]) for n, i in enumerate(indexes, start=1)]


def test_skill_mode_compares_within_class() -> None:
    gt, gen = refs(0, 1, 2), refs(0, 1, 3)
    # GT: Alpha P0, Beta P0, Gamma P1. Generated: Alpha P0, Beta P1 (within-class mismatch), Delta P1
    result = citation_f1(gt, gen, {1: "P0", 2: "P0", 3: "P1"}, {1: "P0", 2: "P1", 3: "P1"}, "skill")
    assert result.p0 is not None and result.p1 is not None
    assert (result.p0.n_gt, result.p0.n_gen, result.p0.n_intersection) == (2, 1, 1)
    assert result.p0.precision == 1.0 and result.p0.recall == 0.5 and result.p0.f1 == pytest.approx(2 / 3)
    # P1: G = {Gamma}, H = {Beta, Delta}: no hit
    assert (result.p1.precision, result.p1.recall, result.p1.f1) == (0.0, 0.0, 0.0) and result.p1.defined
    # overall: G = {Alpha, Beta, Gamma}, H = {Alpha, Beta, Delta}: Beta is an overall hit
    assert result.overall.n_intersection == 2 and result.overall.f1 == pytest.approx(2 / 3)


def test_paperorchestra_mode_partitions_the_ground_truth_only() -> None:
    gt, gen = refs(0, 1, 2, 4), refs(0, 2, 3)
    # Alpha P0, Beta P0, Gamma P1, Epsilon unlabeled (counts as P1)
    result = citation_f1(gt, gen, {1: "P0", 2: "P0", 3: "P1"}, None, "paperorchestra")
    assert result.p0_recall == 0.5 and result.p1_recall == 0.5
    assert result.overall.precision == pytest.approx(2 / 3) and result.overall.recall == 0.5
    data = result.to_json()
    assert set(data) >= {"mode", "overall", "p0_recall", "p1_recall", "counts"} and "P0" not in data
    assert data["counts"]["gt"]["unlabeled"] == 1


def test_an_id_with_both_labels() -> None:
    gt = [ref(1, "Alpha networks"), ref(2, "Alpha Networks.")]  # the same work twice, labelled both ways
    gen = refs(0)
    skill = citation_f1(gt, gen, {1: "P0", 2: "P1"}, {1: "P1"}, "skill")
    assert skill.counts["gt"]["duplicates"] == 1 and skill.counts["gt"]["both_labels"] == 1
    assert skill.p0 is not None and skill.p1 is not None
    assert skill.p0.n_gt == 1 and skill.p1.n_gt == 1 and skill.p1.f1 == 1.0 and skill.p0.recall == 0.0
    po = citation_f1(gt, gen, {1: "P0", 2: "P1"}, None, "paperorchestra")
    assert po.p0_recall == 1.0 and po.p1_recall is None  # both labels make it P0; no P1 work is left


def test_empty_against_empty_is_zero_and_undefined() -> None:
    result = citation_f1([], [], {}, {}, "skill")
    assert result.p0 is not None
    for block in (result.p0, result.p1, result.overall):
        assert block is not None and (block.f1, block.defined) == (0.0, False)


def test_unlabeled_unresolved_and_duplicates_are_counted_not_dropped_silently() -> None:
    gt = [*refs(0, 1), Reference(3, "ghost", resolved=False)]
    gen = [*refs(0, 1), ref(3, "Alpha networks"), ref(4, TITLES[2])]
    result = citation_f1(gt, gen, {1: "P0", 2: "P1"}, {1: "P0", 2: "P1"}, "skill")
    assert result.counts["gt"] == {"references": 3, "unresolved": 1, "duplicates": 0, "unlabeled": 0,
                                   "both_labels": 0}  # fmt: skip
    assert result.counts["gen"]["duplicates"] == 1 and result.counts["gen"]["unlabeled"] == 1
    assert result.overall.n_gen == 2  # the unlabeled Gamma is not in the skill's classes
    assert [r.title for r in result.unmatched_gen] == [TITLES[2]]


def test_macro_average_of_three_papers() -> None:
    gt = refs(0, 1)
    runs = [citation_f1(gt, refs(0, 1), None, None), citation_f1(gt, refs(0), None, None),
            citation_f1(gt, refs(3), None, None)]  # fmt: skip
    macro = macro_average(runs)
    assert macro["n_papers"] == 3
    assert macro["overall"]["f1"] == pytest.approx((1.0 + 2 / 3 + 0.0) / 3)
    assert macro["overall"]["precision"] == pytest.approx((1 + 1 + 0) / 3)


def test_partition_labels_are_case_insensitive_and_anything_else_is_an_error() -> None:
    gt = refs(0, 1)
    assert parse_partition({"1": "p0", "2": " P1 "}, gt, "x.json") == {1: "P0", 2: "P1"}
    with pytest.raises(InputError, match="P2"):
        parse_partition({"1": "P2"}, gt, "x.json")
    with pytest.raises(InputError, match="not a reference number"):
        parse_partition({"7": "P0"}, gt, "x.json")


def test_matching_is_one_to_one_by_best_score() -> None:
    gt = [ref(1, "Deep residual learning for image recognition")]
    gen = [ref(1, "Deep residual learning for image recognitions"), ref(2, "Deep residual learning for recognition")]
    matching = match_references(gt, gen)
    assert [(m.gt, m.gen) for m in matching.matches] == [(0, 0)] and matching.unmatched_gen == [1]


def test_year_breaks_ties_and_vetoes() -> None:
    gt = [ref(1, "Rites of passage", "1909"), ref(2, "The rites of passage", "1960")]
    gen = [ref(1, "The Rites of Passage", "1960")]
    assert [(m.gt, m.gen) for m in match_references(gt, gen).matches] == [(1, 0)]
    assert match_references([ref(1, "Les rites de passage", "1909")], gen).matches == []


GT_TEX = r"""\documentclass{article}
\begin{document}
\cite{kastenholz,sigfridsson,baez/article,wassenberg,spiegelberg,companion,herrmann,knuth:ct:a,kant:kpv,vangennep}
\cite{glashow,weinberg}
\bibliographystyle{plain}
\bibliography{biblatex-examples}
\end{document}
"""
GEN_BIB = r"""
@article{k1, title = {Computation of Methodology-Independent Ionic Solvation Free Energies from Molecular
  Simulations}, year = 2006, url = {https://doi.org/10.1063/1.2172593}}
@article{s1, title = {Comparison of methods for deriving atomic charges}, year = {1998},
  doi = {doi:10.1002/(SICI)1096-987X(199803)19:4<377::AID-JCC1>3.0.CO;2-P}}
@article{b1, title = {Higher dimensional algebra {V}: 2-groups}, year = {2004}, eprint = {math/0307200},
  archivePrefix = {arXiv}}
@article{w1, title = {faster radix sort via virtual memory and write-combining}, year = {2010},
  journal = {arXiv preprint arXiv:1008.2849v2}}
@book{sp1, title = {Intention und Intentionalität in der Scholastik, bei Brentano und Husserl}, year = {1969}}
@book{c1, title = {The \LaTeX\ companion}, year = {1994}}
@article{h1, title = {A carbocyclic carbene as an efficient catalyst ligand for C-C coupling reactions},
  year = {2006}}
@book{t1, title = {The {\TeX}book}, year = {1984}}
@book{m1, title = {The METAFONTbook}, year = {1986}}
@article{b6, title = {Higher-Dimensional Algebra VI: Lie 2-Algebras}, year = {2004}, eprint = {math/0307263v4},
  archivePrefix = {arXiv}}
@book{ku1, title = {Kritik der Urtheilskraft}, year = {1968}}
@book{v1, title = {The Rites of Passage}, year = {1960}}
"""
GEN_TEX = r"""\documentclass{article}
\begin{document}
\cite{k1,s1,b1,w1,sp1,c1,h1,t1,m1,b6,ku1,v1,nowhere}
\bibliography{gen}
\end{document}
"""
EXPECTED = {("kastenholz", "k1"), ("sigfridsson", "s1"), ("baez/article", "b1"), ("wassenberg", "w1"),
            ("spiegelberg", "sp1"), ("companion", "c1"), ("herrmann", "h1"), ("knuth:ct:a", "t1")}  # fmt: skip


@pytest.fixture
def real_pair(tmp_path: Path) -> tuple[Path, Path]:
    require_tool("kpsewhich", "texlive-bibtex-extra")
    (tmp_path / "gt.tex").write_text(GT_TEX)
    (tmp_path / "gen.tex").write_text(GEN_TEX)
    (tmp_path / "gen.bib").write_text(GEN_BIB, encoding="utf-8")
    gt = load_references(tmp_path / "gt.tex")
    if not gt.bib_files:
        pytest.skip("biblatex-examples.bib is not installed: apt-get install texlive-bibtex-extra")
    return tmp_path / "gt.tex", tmp_path / "gen.tex"


def test_real_bib_entries_written_differently_match_and_similar_titles_do_not(real_pair: tuple[Path, Path]) -> None:
    gt, gen = load_references(real_pair[0]), load_references(real_pair[1])
    assert gt.bib_files[0].name == "biblatex-examples.bib" and len(gt.references) == 12
    result = citation_f1(gt.references, gen.references)
    by_num_gt = {r.num: r.key for r in gt.references}
    by_num_gen = {r.num: r.key for r in gen.references}
    found = {(by_num_gt[g], by_num_gen[h]) for g, h, _how, _score in result.matches}
    assert found == EXPECTED
    assert len({g for g, *_ in result.matches}) == len(result.matches)  # one-to-one
    assert {r.key for r in result.unmatched_gen} == {"m1", "b6", "ku1", "v1"}
    assert result.counts["gen"]["unresolved"] == 1  # `nowhere` is cited but defined nowhere
    assert result.overall.n_intersection == 8 and result.overall.n_gt == 12 and result.overall.n_gen == 12


def test_rate_refs_and_citation_f1_commands(real_pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rate", "refs", str(real_pair[0]), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["references"]
    assert [r["num"] for r in listed] == list(range(1, 13)) and listed[0]["key"] == "kastenholz"
    assert listed[0]["doi"] == "10.1063/1.2172593" and listed[2]["arxiv"] == "math/0307200"
    assert set(listed[0]) == {"num", "key", "title", "year", "doi", "arxiv", "id"}
    gt_part = real_pair[0].parent / "gt.json"
    gen_part = real_pair[0].parent / "gen.json"
    gt_part.write_text(json.dumps({str(n): "P0" if n <= 4 else "P1" for n in range(1, 13)}))
    gen_part.write_text(json.dumps({str(n): "p0" for n in range(1, 13)}))
    code = main(["rate", "citation-f1", "--gt", str(real_pair[0]), "--gen", str(real_pair[1]), "--gt-partition",
                 str(gt_part), "--gen-partition", str(gen_part), "--json", "--fail-under", "0.9"])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 1  # F1 8/12 is under 0.9
    assert data["mode"] == "skill" and data["P0"]["n_gt"] == 4 and data["P0"]["n_intersection"] == 4
    assert data["P1"]["n_gen"] == 0 and data["P1"]["defined"] is False
    assert data["counts"]["gen"]["unresolved"] == 1
    assert main(["rate", "citation-f1", "--gt", str(real_pair[0]), "--gen", str(real_pair[1]), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["P0"] is None and "only the overall block" in plain["note"]


def test_pairs_macro_average_and_bad_partition(
    real_pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    directory = real_pair[0].parent
    (directory / "pairs.csv").write_text("gt,gen\ngt.tex,gen.tex\ngt.tex,gt.tex\ngen.tex,gen.tex\n")
    assert main(["rate", "citation-f1", "--pairs", str(directory / "pairs.csv"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n_papers"] == 3 and data["overall"]["f1"] == pytest.approx((8 / 12 + 1 + 1) / 3)
    (directory / "bad.json").write_text('{"1": "P3"}')
    code = main(["rate", "citation-f1", "--gt", str(real_pair[0]), "--gen", str(real_pair[1]), "--gt-partition",
                 str(directory / "bad.json"), "--mode", "paperorchestra"])  # fmt: skip
    assert code == 2 and "bad.json: reference 1: label 'P3' is neither P0 nor P1" in capsys.readouterr().err


def test_bibitem_and_nocite_star(tmp_path: Path) -> None:
    (tmp_path / "a.bib").write_text(
        "@article{x, title={Xylophones}, year=2001}\n@article{y, title={Yaks}, year=2002}\n"
    )
    (tmp_path / "star.tex").write_text("\\documentclass{article}\\begin{document}\\nocite{*}\\bibliography{a}"
                                       "\\end{document}\n")  # fmt: skip
    assert [r.key for r in load_references(tmp_path / "star.tex").references] == ["x", "y"]
    (tmp_path / "items.tex").write_text(
        "\\documentclass{article}\\begin{document}\\cite{v17}\n\\begin{thebibliography}{1}\n"
        "\\bibitem{v17} A.~Vaswani et~al.\n\\newblock Attention is all you need.\n\\newblock In NeurIPS, 2017.\n"
        "\\end{thebibliography}\\end{document}\n"
    )
    (item,) = load_references(tmp_path / "items.tex").references
    assert (item.title, item.year, item.resolved) == ("Attention is all you need", "2017", True)


def test_a_bibliography_outside_the_tree_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.bib"
    outside.write_text("@article{s, title={Private notes}, year=2020}\n")
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "main.tex").write_text(
        "\\documentclass{article}\\begin{document}\\cite{s}\\bibliography{../secret}\\end{document}\n"
    )
    refs = load_references(tmp_path / "paper" / "main.tex")
    assert refs.bib_files == [] and refs.missing_bibs == ["../secret"] and not refs.references[0].resolved


def test_flatten_reads_inputs_in_place_and_never_outside_the_tree(tmp_path: Path) -> None:
    from pytest_patchwrite.autoraters.sections import flatten, review_sections

    (tmp_path / "secret.tex").write_text("SECRET")
    paper = tmp_path / "paper"
    (paper / "sections").mkdir(parents=True)
    (paper / "sections" / "intro.tex").write_text("\\section{Introduction}\nIntro text.\n")
    (paper / "main.tex").write_text("\\documentclass{article}\\begin{document}\n\\input{sections/intro}\n"
                                    "\\input{../secret}\n\\section{Related Work}\nRW.\n\\section{Method}\nM.\n"
                                    "\\end{document}\n")  # fmt: skip
    flat = flatten(paper / "main.tex")
    assert "Intro text." in flat and "SECRET" not in flat and "\\input{../secret}" in flat
    assert [s.title for s in review_sections(flat)] == ["Introduction", "Related Work"]


def test_rate_refs_prints_the_bibs_words_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "refs.bib").write_text("@misc{k1, title={Evil \x1b[2J title}, author={A \x07 B}, year={2020}}\n")
    root = "\\documentclass{article}\n\\begin{document}\n\\cite{k1}\n\\bibliographystyle{plain}\n\\bibliography{refs}\n"
    (tmp_path / "main.tex").write_text(root + "\\end{document}\n")
    assert main(["rate", "refs", str(tmp_path / "main.tex")]) == 0
    out = capsys.readouterr().out
    assert out == "1. A \\x07 B (2020) Evil \\x1b[2J title.\n"  # a .bib's terminal escapes never reach the terminal
