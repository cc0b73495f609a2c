"""Wrong bindings of the labelled sets and of tester2's findings (issue #27, session 3), each a small paper of our own
bound for real (`bind_root`, as `patchwrite bind` does); each was bound wrongly before the rule it tests.

- B1: a prose number whose own words name another record of its entry's field (`compared with the baseline 86.9`)
  is not that field's `ours` entry, while the number before it (whose following words are the neighbour's) still binds;
- B2: an entry that two numbers of one sentence claim on their value alone binds neither (`Values: 0.417 ... 0.417`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support import bind_decisions as decisions
from support import bind_paper as paper

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "paper"
RESULTS = {"run": "occlusion-v3", "seeds": 3, "baseline": {"clean_acc": 0.682, "occluded_acc": 0.417},
           "ours": {"clean_acc": 0.9142, "occluded_acc": 0.869}}  # fmt: skip


def test_a_sentence_naming_the_baseline_does_not_bind_ours(tmp_path: Path) -> None:
    body = "Accuracy was 91.4\\% compared with the baseline 86.9\\%.\n"
    found = decisions(paper(tmp_path, body, {"results.json": RESULTS}))
    assert found["91.4\\%"][2] == "ours.clean_acc"
    assert found["86.9\\%"] == ("unbound", "", "")  # 86.9 is ours.occluded_acc, but the words name the baseline


def test_the_baseline_named_after_its_number_is_still_its_own(tmp_path: Path) -> None:
    body = "Accuracy was 91.4\\% for ours and 68.2\\% for the baseline.\n"
    found = decisions(paper(tmp_path, body, {"results.json": RESULTS}))
    assert found["68.2\\%"][2] == "baseline.clean_acc"
    assert found["91.4\\%"][2] == "ours.clean_acc"


def test_the_example_paper_edited_as_tester2_did_leaves_the_number_unbound(tmp_path: Path) -> None:
    root = tmp_path / "paper"
    shutil.copytree(EXAMPLE, root)
    results = root / "sections" / "results.tex"
    lines = results.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace("68.2", "86.9")
    results.write_text("".join(lines))
    from pytest_patchwrite.flows.bind import bind_root
    from pytest_patchwrite.gates.evidence import EvidenceConfig

    rows = json.loads(bind_root(root / "main.tex", EvidenceConfig()).new_text)["bindings"]
    line3 = [r for r in rows if r["file"] == "sections/results.tex" and r["line"] == 3]
    assert [r["token"] for r in line3] == ["91.4\\%"]  # 86.9\% has no decision (it was ours.occluded_acc)


def test_an_entry_two_numbers_of_one_sentence_fit_on_value_alone_binds_neither(tmp_path: Path) -> None:
    body = "Values: 0.417 0.552 0.417 0.869 0.130 0.869 0.731.\n"
    found = decisions(paper(tmp_path, body, {"results.json": RESULTS}))
    assert found["0.417"] == ("unbound", "", "") and found["0.869"] == ("unbound", "", "")


def test_one_number_on_value_alone_still_binds_below_the_chance_bound(tmp_path: Path) -> None:
    body = "Values: 0.417 0.552 0.130.\n"
    assert decisions(paper(tmp_path, body, {"results.json": RESULTS}))["0.417"][2] == "baseline.occluded_acc"
