"""Numbers the binder left unattested though their context is evidence a person accepts (issue #27, session 3): one
small paper of our own per class found in the labelled sets, each bound for real (`bind_root`, as `patchwrite bind`
does). Each case was unbound (or bound wrongly) before the rule it tests:

- a byte unit names the scale: `80 MB`, a caption's `(MB per sequence)`, a glued `1.5B tokens`;
- a LaTeX row maps onto one log record: a cell whose value several records hold is the row's record's;
- one value logged twice under the same field in two logs (a CSV row's `f1` and a JSON `test_metrics.f1`) is one
  answer, not `ambiguous`;
- a setting word beside a number does not veto the entry its own words name (`AUROC (no KL)`);
- a seed printed as such (`we use seed 20231015`) is the run's `seed`;
- the folders above the paper name no model size (a checkout under `ckpt-7b/` is no 7B model).
"""

from __future__ import annotations

import json
from pathlib import Path

from support import bind_decisions as decisions
from support import bind_noise as noise
from support import bind_paper as paper


def test_a_byte_unit_after_a_prose_number_scales_it(tmp_path: Path) -> None:
    log = {"cache": {"bytes_per_seq": 80216064, "latency_ms": 12.7}, **noise(40)}
    body = "The hybrid keeps a decode cache of 80 MB per sequence at 64k context.\n"
    assert decisions(paper(tmp_path, body, {"cache.json": log}))["80"][2] == "cache.bytes_per_seq"


def test_a_caption_in_megabytes_scales_the_cells_of_its_table(tmp_path: Path) -> None:
    table = r"""\begin{table}
\caption{Decode cache (MB per sequence) versus context length.}
\begin{tabular}{lcc}
Variant & 4k & 64k \\
transformer & 151.0 & 2415.9 \\
hybrid & 8.8 & 79.5 \\
\end{tabular}
\end{table}
"""
    csv = "variant,cache_4k,cache_64k\ntransformer,151003136,2415919104\nhybrid,8796160,79495168\n"
    found = decisions(paper(tmp_path, table, {"cache.csv": csv}))
    assert found["2415.9"][2] == "row 1 (variant=transformer), column cache_64k"
    assert found["8.8"][2] == "row 2 (variant=hybrid), column cache_4k"


def test_a_glued_magnitude_scales_a_count(tmp_path: Path) -> None:
    log = {"train": {"tokens": 1500000000, "steps": 12000}}
    body = "Each model sees 1.5B tokens in training.\n"
    assert decisions(paper(tmp_path, body, {"train.json": log}))["1.5B"][2] == "train.tokens"


def test_a_row_mapped_onto_one_record_settles_a_value_several_records_hold(tmp_path: Path) -> None:
    # three rows of a sweep reach the same objective and unmet demand; the gamma and cost cells say which record
    sweep = [{"gamma": g, "objective": o, "expected_unmet": u, "cost": c} for g, o, u, c in
             [(0.0, 241870.0, 0.482, 1.52), (0.5, 238220.0, 0.109, 1.61), (1.0, 238220.0, 0.109, 1.73),
              (2.0, 238220.0, 0.109, 1.94)]]  # fmt: skip
    table = r"""\begin{tabular}{lcccc}
Setting & Objective & Expected unmet & Gamma & Cost \\
loose & 241870 & 0.482 & 0.0 & 1.52 \\
mid & 238220 & 0.109 & 0.5 & 1.61 \\
tight & 238220 & 0.109 & 1.0 & 1.73 \\
\end{tabular}
"""
    root = paper(tmp_path, table, {"results.json": {"gamma_sweep": sweep}})
    cells = bound_cells(root.parent)
    assert ("0.109", "gamma_sweep[1].expected_unmet") in cells and ("0.109", "gamma_sweep[2].expected_unmet") in cells
    assert ("238220", "gamma_sweep[1].objective") in cells and ("238220", "gamma_sweep[2].objective") in cells


def bound_cells(directory: Path) -> list[tuple[str, str]]:
    """Return (token, locator) of every bound number of the paper in `directory`, in reading order."""
    from pytest_patchwrite.flows.bind import bind_root
    from pytest_patchwrite.gates.evidence import EvidenceConfig

    result = bind_root(directory / "main.tex", EvidenceConfig()).reconciled.result
    return [(b.occurrence.token, b.best.entry.at) for b in sorted(result.bound, key=lambda b: b.occurrence.number.start)
            if b.how != "ambiguous"]  # fmt: skip


def test_one_value_logged_twice_under_one_field_is_one_answer(tmp_path: Path) -> None:
    csv = "model,f1,roc_auc\nSimilarityBaseline,0.3392,0.6334\nLogisticRegression,0.4293,0.767\n"
    summary = {"test_metrics": {"f1": 0.4293, "roc_auc": 0.767}, "similarity_baseline": {"f1": 0.3391959798994975}}
    body = "On the held-out split the deployed model scores F1 0.429 and ROC-AUC 0.767.\n"
    found = decisions(paper(tmp_path, body, {"metrics.csv": csv, "run_summary.json": summary}))
    assert found["0.429"][0] == "context" and found["0.429"][2] in ("row 2 (model=LogisticRegression), column f1",
                                                                     "test_metrics.f1")  # fmt: skip
    assert found["0.767"][0] == "context"


def test_two_different_values_of_one_field_stay_ambiguous(tmp_path: Path) -> None:
    # 0.4293 and 0.4311 are two measurements (two models), not one logged twice: no mirror
    csv = "model,f1\nLogisticRegression,0.4293\n"
    summary = {"test_metrics": {"f1": 0.4311}}
    body = "The deployed model scores F1 0.43 on the held-out split.\n"
    found = decisions(paper(tmp_path, body, {"metrics.csv": csv, "run_summary.json": summary}))
    assert found["0.43"][0] in ("ambiguous", "unbound")


def test_a_setting_word_does_not_veto_the_field_the_number_names(tmp_path: Path) -> None:
    ablation = {"Entropy only": {"auroc": 0.8231, "fpr90": 0.302}, "Both": {"auroc": 0.8304, "fpr90": 0.281}}
    table = r"""\begin{tabular}{lcc}
Signal & AUROC & FPR@90 \\
Entropy only (no KL) & 0.823 & 0.302 \\
Both & 0.830 & 0.281 \\
\end{tabular}
"""
    found = decisions(paper(tmp_path, table, {"ablation.json": ablation}))
    assert found["0.823"][2] == '["Entropy only"].auroc'


def test_a_setting_without_its_field_named_stays_unbound(tmp_path: Path) -> None:
    csv = "run,pct_under_0_80,recall\nr1,0.125,0.71\nr2,0.342,0.69\n"
    body = "The KL coefficient of 0.125 keeps the recall stable.\n"
    assert decisions(paper(tmp_path, body, {"eval.csv": csv}))["0.125"] == ("unbound", "", "")


def test_a_seed_printed_as_a_seed_binds_the_runs_seed(tmp_path: Path) -> None:
    log = {"seed": 20231015, "objective": 238220.0}
    body = "All results use seed 20231015 and one script.\n"
    assert decisions(paper(tmp_path, body, {"results.json": log}))["20231015"][2] == "seed"


def test_an_index_column_still_never_binds(tmp_path: Path) -> None:
    log = {"by_layer": [{"layer": i, "acc": round(0.5 + i / 100, 3)} for i in range(40)]}
    body = "Probing accuracy peaks at layer 31 of the model.\n"
    assert decisions(paper(tmp_path, body, {"probe.json": log})).get("31", ("unbound",))[0] == "unbound"


def test_folders_above_the_paper_name_no_model_size(tmp_path: Path) -> None:
    table = r"""\begin{tabular}{lcc}
Model & Brier & ECE \\
Qwen2.5-32B zero-shot & 0.2057 & 0.0569 \\
Qwen2.5-32B tuned & 0.1522 & 0.0293 \\
\end{tabular}
"""
    log = {"models": {"zero_shot": {"brier": 0.20570796, "ece": 0.05686788}, "tuned": {"brier": 0.1522, "ece": 0.0293}}}
    root = paper(tmp_path / "ckpt-7b" / "paper", table, {"results.json": log})  # a checkout under a `7b` folder
    assert decisions(root)["0.2057"][2] == "models.zero_shot.brier"


def test_a_one_valued_field_named_by_a_word_no_other_field_holds_binds(tmp_path: Path) -> None:
    # two digits of a one-valued field: 1 in 90 by chance, above the 1% bound; `faculty` names that field alone
    log = {"recognition": {"faculty": 0.55, "imo": 0.12, "putnam": 0.34, "baseline": 0.40, "oss": 0.87}}
    body = "Credentials spread widely: CS faculty reach 0.55 on the ladder.\n"
    assert decisions(paper(tmp_path, body, {"stats.json": log}))["0.55"][2] == "recognition.faculty"


def test_a_word_several_fields_hold_names_none_of_them_alone(tmp_path: Path) -> None:
    log = {"eval": {"clean_accuracy": 0.55, "occluded_accuracy": 0.71, "ood_accuracy": 0.43}}
    body = "The accuracy reaches 0.55 here.\n"
    assert decisions(paper(tmp_path, body, {"eval.json": log}))["0.55"] == ("unbound", "", "")


def test_several_records_of_one_log_are_no_mirror_of_one_entry(tmp_path: Path) -> None:
    # three runs of one log reach the same step count a summary holds: which run the text means is not said
    runs = "\n".join(json.dumps({"model": m, "steps": 12000, "loss": round(2.1 + k / 10, 2)})
                     for k, m in enumerate(("mamba_full", "mamba_swa", "mamba_mla")))  # fmt: skip
    logs = {"summary.json": {"budget": {"steps": 12000}}, "runs.jsonl": runs + "\n"}
    body = "Every hybrid trains for 12000 steps.\n"
    assert decisions(paper(tmp_path, body, logs))["12000"][0] in ("ambiguous", "unbound")
