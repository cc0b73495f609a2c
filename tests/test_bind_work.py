"""The binder's work per number is bounded, and the shortcuts that bound it decide exactly as the full evaluation.

`patchwrite bind` took minutes on real papers (progalign, stablenalu, z2mpemba; tester2's VAMOS did not finish
in 400 s): a `0` or `1` fits thousands of logged values, and every (number, fitting entry) pair re-split the
entry's names and compared every context word with every name word. Now each entry's words are read once per
bind and each name word is compared with a number's context once (`bindnames`), and a prose number's fits that
its context names neither by field nor by row are not weighed past the second (`bindplan.PRUNE`). No timing
here: the work is counted, and the results are compared with the plain rules (`bindrules.naming`,
`binder.score`) and with an unpruned bind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_patchwrite.flows.bind import bind_root
from pytest_patchwrite.gates.evidence import EvidenceConfig
from pytest_patchwrite.numbers import bindplan
from pytest_patchwrite.numbers.binder import factor_of, score, transforms
from pytest_patchwrite.numbers.bindnames import Naming
from pytest_patchwrite.numbers.bindrules import naming

PAPERS = Path(__file__).parent / "bind_papers"
CELLS = 1000  # logged zeros and ones no sentence names


def dense_paper(tmp_path: Path) -> Path:
    """Write a paper whose sentences print 0.0 and 1.0 beside a log holding thousands of them; return its root."""
    log = {"cells": {f"c{i}": {"hits": 0.0, "misses": 1.0} for i in range(CELLS)}, "summary": {"loss": 0.0}}
    (tmp_path / "results.json").write_text(json.dumps(log))
    sentences = []
    for i in range(20):
        sentences.append(f"In trial {i} the summary loss was 0.0 and the ratio stayed at 1.0 throughout.")
        sentences.append(f"Pass {i} printed 0.0 and then 1.0 again, as expected.")
    root = tmp_path / "main.tex"
    root.write_text("% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\n"
                    + "\n\n".join(sentences) + "\n\\end{document}\n")  # fmt: skip
    return root


def counted_bind(root: Path, monkeypatch: pytest.MonkeyPatch, prune: bool) -> tuple[str, int, list[str]]:
    """Bind `root` (nothing written); return the bindings text, the fits weighed, and the numbers' tokens."""
    made: list[bindplan.Rules] = []
    original = bindplan.Rules.of

    def of(datas: object) -> bindplan.Rules:
        rules = original(datas)  # type: ignore[arg-type]
        made.append(rules)
        return rules

    monkeypatch.setattr(bindplan.Rules, "of", staticmethod(of))
    monkeypatch.setattr(bindplan, "PRUNE", prune)
    outcome = bind_root(root, EvidenceConfig())
    return outcome.new_text, sum(r.evaluated for r in made), [o.token for o in outcome.reconciled.occurrences]


def test_a_paper_dense_with_zeros_weighs_few_fits_per_number_and_binds_as_the_full_evaluation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = dense_paper(tmp_path)
    full_text, full, numbers = counted_bind(root, monkeypatch, prune=False)
    pruned_text, pruned, _ = counted_bind(root, monkeypatch, prune=True)
    printed = [t for t in numbers if t in ("0.0", "1.0")]
    assert len(printed) == 80
    assert full >= len(printed) * CELLS  # every 0.0 fits every logged zero, every 1.0 every one
    assert pruned_text == full_text  # the same decisions, byte for byte
    # per number (the trial and batch integers too): the fits its words name (summary.loss; `ratio` names nothing)
    # and at most two others
    assert pruned <= len(numbers) * 3
    assert '"at": "summary.loss"' in pruned_text


@pytest.mark.parametrize("paper", ["rlmgate", "gpuadmix", "stablenalu"])
def test_each_name_word_is_compared_once_per_number_and_gives_the_plain_rules_values(paper: str) -> None:
    from pytest_patchwrite.gates.binding import read_for_locks
    from pytest_patchwrite.numbers.binder import EntryIndex, occurrences
    from pytest_patchwrite.snapshot.manuscript import load_manuscript
    from pytest_patchwrite.tex.latex import scan

    data = json.loads((PAPERS / paper / "labels.json").read_text())
    manuscript = load_manuscript(PAPERS / paper / data["root"])
    scans = [scan(manuscript.texts[p], str(p)) for p in manuscript.files]
    occs = occurrences(scans, manuscript.texts, "decimals", set())
    logs = sorted(p for pattern in data["logs"] for p in (PAPERS / paper).glob(pattern))
    datas = read_for_locks(manuscript, scans, logs, occs, None, need_pool=False).datas
    index = EntryIndex(list(datas.values()))
    rules = bindplan.Rules.of(list(datas.values()))
    pairs = 0
    for occ in occs[:80]:
        names = Naming(occ.context.words)
        asked: set[str] = set()
        for transform, _ in transforms(occ):
            power = factor_of(transform)
            assert power is not None
            for entry, _value, fields, row, words in rules.fitting(index, occ.number.value, power):
                pairs += 1
                assert names.naming(fields) == naming(occ.context.words, list(fields))
                assert names.naming(row) == naming(occ.context.words, list(row))
                assert names.score(words) == score(occ.context, entry)
                asked.update(fields, row, words)
        assert names.compared <= len(asked)  # each name word against the context once, however many entries
    assert pairs > 100
