"""The binder binds on evidence, never on an equal value alone: one small paper of our own per mistake class of the
bindings issue (a coincidence, a setting, the wrong row or configuration, an identifier, a column mean or a per-seed
row, a derived number that fits by arithmetic alone), and the cases the evidence must still bind (a prose number its
sentence names, a table mapped as a block, a named aggregate, a difference in one sentence).

Every paper and log is written in tmp_path and bound for real (`bind_root`, as `patchwrite bind` does). The mistake
cases were each bound wrongly by the value-first binder; they must now stay unbound (or bind to the right entry).
"""

from __future__ import annotations

from pathlib import Path

from support import bind_decisions as decisions
from support import bind_noise as noise
from support import bind_paper as paper

from pytest_patchwrite.flows.bind import bind_root, write_bindings
from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

# --- the mistake classes --------------------------------------------------------------------------------------------


def test_an_unlogged_result_equal_to_an_unrelated_entry_stays_unbound(tmp_path: Path) -> None:
    log = {"calibration": {"p_hi": 0.7712, "p_lo": 0.6104, **noise(30)}}
    root = paper(tmp_path, "The regressor reaches an AUROC of 0.771 on the held-out split.\n", {"stats.json": log})
    assert decisions(root)["0.771"] == ("unbound", "", "")  # nothing names p_hi; 32 values make 0.771 likely


def test_a_setting_does_not_bind_to_a_result_column(tmp_path: Path) -> None:
    csv = "run,pct_under_0_80,recall\nr1,0.125,0.71\nr2,0.342,0.69\n"
    body = "We train with a KL coefficient of 0.125 for all runs.\n"
    assert decisions(paper(tmp_path, body, {"eval.csv": csv}))["0.125"] == ("unbound", "", "")


def test_a_setting_axis_of_a_table_does_not_bind_to_a_result_cell(tmp_path: Path) -> None:
    table = r"""\begin{tabular}{lcc}
Bandwidth & Precision & Recall \\
100\% & 0.912 & 0.854 \\
50\% & 0.871 & 0.802 \\
\end{tabular}
"""
    csv = "split,precision,recall\nfull,0.912,0.854\nhalf,0.871,0.802\nclean,1.0,0.97\n"
    found = decisions(paper(tmp_path, table, {"eval.csv": csv}))
    assert found["100\\%"] == ("unbound", "", "")  # the exit bandwidth is the axis, not the clean split's precision
    assert found["0.912"][2] == "row 1 (split=full), column precision"


def test_the_right_value_of_another_model_size_stays_unbound(tmp_path: Path) -> None:
    logs = {"results_7b.json": {"loss": 1.234, "ppl": 3.43}, "results_32b.json": {"loss": 1.118, "ppl": 3.06}}
    body = "The 32B model reaches a loss of 1.234 after one epoch.\n\nThe 7B model reaches a perplexity of 3.43.\n"
    found = decisions(paper(tmp_path, body, logs))
    assert found["1.234"] == ("unbound", "", "")  # 1.234 is the 7B file's loss
    assert found["3.43"] == ("context", "results_7b.json", "ppl")


def test_a_table_cell_does_not_bind_to_the_row_of_another_label(tmp_path: Path) -> None:
    table = r"""\begin{tabular}{lc}
Schedule & Score \\
Late-heavy & 0.412 \\
Early-heavy & 0.377 \\
\end{tabular}
"""
    log = {"middle-heavy": {"score": 0.412}, "late-heavy": {"score": 0.405}, "early-heavy": {"score": 0.377}}
    found = decisions(paper(tmp_path, table, {"schedules.json": log}))
    assert found["0.412"] == ("unbound", "", "")  # the late-heavy cell holds the middle-heavy row's value
    assert found["0.377"][2] == "early-heavy.score"


def test_an_identifier_or_index_never_binds_a_measured_number(tmp_path: Path) -> None:
    layers = [{"layer": i, "probe_acc": round(0.5 + i / 100, 3)} for i in range(32)]
    keys = [{"key_id": 33, "threshold_tau": 41.12}, {"key_id": 34, "threshold_tau": 40.5}]
    body = "Probing accuracy peaks at 26.0 in the middle of the network.\n\nRecall is 33.0\\% on the keys.\n"
    found = decisions(paper(tmp_path, body, {"probe.json": {"by_layer": layers, "keys": keys}}))
    assert found["26.0"] == ("unbound", "", "")  # by_layer[26].layer is an index
    assert found["33.0\\%"] == ("unbound", "", "")  # keys[0].key_id is an identifier


def test_a_column_mean_binds_only_when_the_text_names_the_mean(tmp_path: Path) -> None:
    csv = "item,judge_uplift\n" + "".join(f"q{i},{v}\n" for i, v in enumerate([18.2, 21.4, 19.83, 19.81]))
    body = "The regressor's 95th-percentile error is 19.8 points.\n"
    found = decisions(paper(tmp_path, body, {"judge.csv": csv}))
    assert found["19.8"] == ("unbound", "", "")  # mean(column judge_uplift) is 19.81, but nothing names a mean


def test_the_summary_wins_over_a_per_seed_row_unless_the_text_names_the_seed(tmp_path: Path) -> None:
    seeds = [{"seed": s, "acc": a} for s, a in enumerate([0.914, 0.902, 0.921])]
    logs = {"summary.json": {"acc": 0.914, "f1": 0.88}, "seeds.json": seeds}
    body = "Accuracy is 91.4\\% on the test set.\n\nWith seed 1 the accuracy is 90.2\\%.\n"
    found = decisions(paper(tmp_path, body, logs))
    assert found["91.4\\%"] == ("context", "summary.json", "acc")
    assert found["90.2\\%"] == ("context", "seeds.json", "[1].acc")


def test_a_derived_number_that_fits_by_arithmetic_alone_stays_unbound(tmp_path: Path) -> None:
    log = {"probe": {"held_out_score": 41.12, "train_score": 33.0}}
    body = "The probe scores 41.12 on held-out data and 33.00 on training data; 24.6\\% of the probes fire.\n"
    found = decisions(paper(tmp_path, body, {"probe.json": log}))
    assert found["41.12"][0] == "context" and found["33.00"][0] == "context"
    assert found["24.6\\%"] == ("unbound", "", "")  # (41.12 - 33) / 33 = 24.6%, but nothing names a change


# --- what evidence still binds --------------------------------------------------------------------------------------


def test_a_prose_number_binds_to_the_entry_its_sentence_names(tmp_path: Path) -> None:
    log = {"ours": {"f1": 0.873, "acc": 0.9}, "baseline": {"f1": 0.801}, "probes": noise(40)}
    body = "The F1 score of our model on the test set is 0.873, against 0.801 for the baseline.\n"
    found = decisions(paper(tmp_path, body, {"results.json": log}))
    assert found["0.873"] == ("context", "results.json", "ours.f1")
    assert found["0.801"] == ("context", "results.json", "baseline.f1")


def test_a_table_whose_headers_name_no_field_binds_as_a_block(tmp_path: Path) -> None:
    table = r"""\begin{table}
\caption{Two settings.}
\begin{tabular}{lcc}
 & A & B \\
First & 0.731 & 0.652 \\
Second & 0.814 & 0.779 \\
\end{tabular}
\end{table}
"""
    csv = "name,c1,c2\nm1,0.731,0.652\nm2,0.814,0.779\n" + "".join(f"x{i},{v:.3f},{v / 2:.3f}\n" for i, v in
                                                                 enumerate(noise(30).values()))  # fmt: skip
    found = decisions(paper(tmp_path, table, {"grid.csv": csv}))
    assert found["0.731"] == ("context", "grid.csv", "row 1 (name=m1), column c1")
    assert found["0.779"] == ("context", "grid.csv", "row 2 (name=m2), column c2")


def test_a_named_aggregate_binds_with_its_formula(tmp_path: Path) -> None:
    runs = [{"run": i, "acc": a} for i, a in enumerate([0.861, 0.874, 0.884])]
    latency = "request,latency_ms\n" + "".join(f"r{i},{v}\n" for i, v in enumerate([11.2, 12.1, 12.7, 15.9]))
    body = "On average over three runs the accuracy is 87.3\\%.\n\nThe median latency is 12.4 ms per request.\n"
    found = decisions(paper(tmp_path, body, {"runs.json": {"runs": runs}, "latency.csv": latency}))
    assert found["87.3\\%"] == ("derived", "mean", "")
    assert found["12.4"] == ("derived", "median", "")


def test_a_difference_in_one_sentence_binds_as_derived(tmp_path: Path) -> None:
    log = {"ours": {"acc": 0.914}, "baseline": {"acc": 0.682}, "probes": noise(40)}
    body = "Ours reaches 91.4\\% against 68.2\\% for the baseline, 23.2 points more.\n"
    found = decisions(paper(tmp_path, body, {"results.json": log}))
    assert found["23.2"] == ("derived", "difference", "")


def test_a_count_that_its_sentence_names_is_locked_and_an_unnamed_integer_is_never_reported(tmp_path: Path) -> None:
    log = {"corpus": {"n_documents": 10578, "n_tokens": 2891344}, "train": {"epochs": 3, "acc": 0.914}}
    body = "We collect 10{,}578 documents with 2,891,344 tokens.\n\nWe train for 3 rounds and reach 91.4\\%.\n"
    root = paper(tmp_path, body, {"corpus.json": log})
    found = decisions(root)
    assert found["10{,}578"] == ("context", "corpus.json", "corpus.n_documents")
    assert found["2,891,344"] == ("context", "corpus.json", "corpus.n_tokens")
    assert found["3"] == ("unbound", "", "")  # nothing names `epochs`, and one digit matches 1 of 9 by chance
    outcome = bind_root(root, EvidenceConfig())
    assert [o.token for o in outcome.reconciled.result.unattested] == []  # the integer is quiet, not unattested
    write_bindings(outcome.path, outcome.new_text)

    def findings() -> list[tuple[str, str]]:
        config = EvidenceConfig()
        report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
        return [(v.kind, v.token) for v in report.numbers or []]

    assert findings() == []
    root.write_text(root.read_text().replace("10{,}578 documents", "10{,}587 documents"))
    assert findings() == [("binding_mismatch", "10{,}587")]  # a changed count is caught


def test_a_field_whose_words_a_cell_spells_out_binds_in_a_flat_summary_and_a_mirror_is_no_ambiguity(
    tmp_path: Path,
) -> None:
    # a flat summary (one value per field, no row to name) mirrored by a second file: rlmgate's summary.json and
    # eval_after_summary.json. Two digits of a field named by one word would be a guess (1 of 90); a field of two
    # or more specific words that the cell's own header and label spell out is the entry.
    summary = {"full_context_accuracy": 0.917, "rlm_rolling_accuracy": 0.917, "old_fact_accuracy": 0.9,
               "recent_fact_accuracy": 1.0, "accuracy_gap": 0.0}  # fmt: skip
    table = r"""\begin{table}
\begin{tabular}{lcc}
Metric & Full context & RLM rolling \\
Accuracy & 92\% & 92\% \\
Old-fact accuracy & --- & 90\% \\
\end{tabular}
\caption{Recall of the facts.}
\end{table}
"""
    prose = "Overall accuracy is high: 92\\% of the facts.\n"
    logs = {"summary.json": summary, "after_summary.json": summary}
    root = paper(tmp_path, table + "\n" + prose, logs)
    result = bind_root(root, EvidenceConfig()).reconciled.result
    bound = sorted((b.occurrence.number.line, b.occurrence.token, b.how, Path(b.best.entry.log).name, b.best.entry.at)
                   for b in result.bound)  # fmt: skip
    assert bound == [
        (7, "92\\%", "context", "summary.json", "full_context_accuracy"),
        (7, "92\\%", "context", "summary.json", "rlm_rolling_accuracy"),
        (8, "90\\%", "context", "summary.json", "old_fact_accuracy"),
    ]
    # the prose 92% names `accuracy` alone: two fields hold 0.917, and one word of each is no evidence
    assert [occ.token for occ in result.unattested] == ["92\\%"]


def test_a_spelled_out_field_needs_the_numbers_own_words_and_a_field_of_one_value(tmp_path: Path) -> None:
    # the words of `full_context_accuracy` stand in the sentence, but not beside 92%: it reports the rolling system
    summary = {"full_context_accuracy": 0.917, "rlm_rolling_accuracy": 0.917}
    body = ("With reminders the rolling system reaches 92\\% fact recall, exactly the full-context accuracy.\n\n"
            "Old-fact accuracy is 90\\% here.\n")  # fmt: skip
    runs = "run,old_fact_accuracy\nr1,0.9\nr2,0.85\nr3,0.7\n"  # a column of three values: the field names no row
    found = decisions(paper(tmp_path, body, {"summary.json": summary, "runs.csv": runs}))
    # its own words name `rolling` and `full`, one field each: ambiguous (both listed) at best, never one of them
    assert found["92\\%"][0] in ("unbound", "ambiguous")
    assert found["90\\%"] == ("unbound", "", "")


def test_a_zero_binds_only_to_a_field_its_own_words_name(tmp_path: Path) -> None:
    # rlmgate: `within 0.000 of full-context accuracy` bound to the full_context row's gate_deposits = 0 (a far
    # `gate` named the field); logs hold zeros everywhere, so a zero's own words must name its field
    csv = "mode,gate_deposits,wall_seconds\nfull_context,0,20242.4\nrolling,12,12148.1\n"
    body = ("The drift-aware gate is, in this benchmark, strictly better on both axes: faster and within 0.000 of "
            "full-context accuracy.\n\nThe accuracy gap is 0.000 on the after run.\n")  # fmt: skip
    logs = {"runs.csv": csv, "summary.json": {"accuracy_gap": 0.0, "full_context_accuracy": 0.917}}
    root = paper(tmp_path, body, logs)
    result = bind_root(root, EvidenceConfig()).reconciled.result
    bound = {(b.occurrence.number.line, b.occurrence.token): b.best.entry.at for b in result.bound}
    assert (4, "0.000") not in bound  # not gate_deposits
    assert bound[(6, "0.000")] == "accuracy_gap"
