"""Reading what the binder never considered (issue #27, session 3): one small paper of our own per cause.

Each paper and log is written in tmp_path and bound for real (`bind_root`, as `patchwrite bind` does); each number
the scanner or the log reader missed before is now an occurrence the binder weighs (its evidence rules decide
whether it binds), a bound one stays locked (a changed digit is `binding_mismatch`), and without a bindings file
the pool rule reads what it always read.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import logged_paper as paper
from support import require_tool

from pytest_patchwrite.flows.bind import bind_root, write_bindings
from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript
from pytest_patchwrite.tex.latex import scan


def bound(root: Path) -> dict[str, str]:
    """Return token -> locator of every number bound on evidence; write the bindings file as `bind` does."""
    outcome = bind_root(root, EvidenceConfig())
    write_bindings(outcome.path, outcome.new_text)
    return {b.occurrence.token: b.best.entry.at for b in outcome.reconciled.result.bound if b.how != "ambiguous"}


def considered(root: Path) -> list[str]:
    """Return the tokens of every number the binder weighs (bound or not)."""
    return [o.token for o in bind_root(root, EvidenceConfig()).reconciled.occurrences]


def findings(root: Path) -> list[str]:
    """Return the number lock's findings as `check` prints them."""
    config = EvidenceConfig()
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    return [v.format(root.parent) for v in report.numbers or []]


def kinds(root: Path) -> list[str]:
    return [f.split(": ", 1)[1].split()[0] for f in findings(root)]


# --- an interval in brackets after a command -------------------------------------------------------------------------

INTERVAL = r"The tm lower and upper bounds lie in $t_M \in [0.331, 19.87]$ over all pairs." + "\n"


def test_an_interval_in_brackets_after_a_command_is_read_and_locked(tmp_path: Path) -> None:
    # `\in [...]` and `{\scriptsize [...]}` were read as a command's options: the numbers were never seen
    root = paper(tmp_path, INTERVAL, {"results.json": {"tm": {"lower": 0.3312, "upper": 19.874}}})
    assert bound(root) == {"0.331": "tm.lower", "19.87": "tm.upper"}
    assert "binding_mismatch" not in kinds(root)
    root.write_text(root.read_text().replace("19.87]", "19.97]"))
    mismatches = [f for f in findings(root) if "binding_mismatch" in f]
    assert len(mismatches) == 1
    assert mismatches[0].startswith("main.tex:4: binding_mismatch 19.97 is bound to results.json tm.upper = 19.874, "
                                    "which prints as 19.87; ")  # fmt: skip


def test_a_confidence_interval_in_a_table_cell_is_read_with_its_signs(tmp_path: Path) -> None:
    table = (r"\begin{tabular}{lc}" "\nModel & Brier \\\\\n"
             r"Direct & 0.1443\,{\scriptsize[0.1394,\,0.1491]} \\" "\n"
             r"Gap & -0.0079 & {\scriptsize[-0.0101,\,-0.0057]} \\" "\n\\end{tabular}\n")  # fmt: skip
    numbers = [(n.text, str(n.value)) for n in scan(table).numbers]
    assert numbers == [("0.1443", "0.1443"), ("0.1394", "0.1394"), ("0.1491", "0.1491"), ("-0.0079", "-0.0079"),
                       ("-0.0101", "-0.0101"), ("-0.0057", "-0.0057")]  # fmt: skip
    root = paper(tmp_path, table, {"results.json": {"direct": {"brier": 0.1443}}})
    assert {"0.1394", "0.1491", "-0.0101", "-0.0057"} <= set(considered(root))


def test_without_a_bindings_file_the_pool_rule_does_not_read_a_bracketed_interval(tmp_path: Path) -> None:
    # the log holds neither end: the pool rule never read them, and it still does not (no new unattested_number)
    root = paper(tmp_path, INTERVAL + "Accuracy was 91.4\\%.\n", {"results.json": {"acc": 0.914}})
    assert findings(root) == []
    assert all(not n.pooled("all") for n in scan(INTERVAL).numbers if n.text in ("0.331", "19.87"))


def test_check_reports_a_changed_digit_of_a_bracketed_interval(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = paper(tmp_path, INTERVAL, {"results.json": {"tm": {"lower": 0.3312, "upper": 19.874}}})
    cli = [sys.executable, "-m", "pytest_patchwrite.cli"]
    assert subprocess.run([*cli, "bind", "main.tex"], cwd=tmp_path, capture_output=True, timeout=120).returncode == 0
    root.write_text(root.read_text().replace("[0.331,", "[0.341,"))
    done = subprocess.run([*cli, "check", "main.tex", "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "main.tex:4: binding_mismatch 0.341 is bound to results.json tm.lower = 0.3312" in done.stdout


# --- a number a macro's definition holds, printed where the macro is used --------------------------------------------

MACROS = r"""\newcommand{\stdIters}{40}
\newcommand{\fried}{$\chi^2 = 1.875$}
We solved every instance.

The standard cuts require \stdIters{} iterations to converge.

Across the four regimes (Friedman test, \fried), nothing differs.
"""
PARETO = {"pareto": {"standard": {"iterations": 40, "cuts": 195}, "pareto": {"iterations": 27, "cuts": 127}},
          "friedman_chi2": 1.875, "friedman_pvalue": 0.5987}  # fmt: skip


def test_a_number_in_a_macro_definition_is_named_where_the_macro_is_used(tmp_path: Path) -> None:
    # the definition's own words (`\newcommand{\stdIters}{40}`) name nothing; the sentence that prints it does
    root = paper(tmp_path, MACROS, {"results.json": PARETO})
    assert bound(root) == {"40": "pareto.standard.iterations", "1.875": "friedman_chi2"}
    assert [n.macro for n in scan(root.read_text()).numbers if n.text in ("40", "1.875")] == ["\\stdIters", "\\fried"]
    assert "binding_mismatch" not in kinds(root)
    root.write_text(root.read_text().replace("{\\stdIters}{40}", "{\\stdIters}{41}"))
    mismatches = [f for f in findings(root) if "binding_mismatch" in f]
    assert len(mismatches) == 1 and mismatches[0].startswith("main.tex:4: binding_mismatch 41 is bound to results.json")


# --- a number glued to a control word (tester3 N0: a bypass) ----------------------------------------------------------

GLUED = [r"\relax", r"\null", r"\bf", r"\ignorespaces", r"\unskip", r"\noexpand", r"\expandafter", r"\string", r"\ours"]


def test_digits_right_after_a_control_word_are_the_number_tex_prints() -> None:
    for word in GLUED:
        assert [(n.text, str(n.value)) for n in scan(f"Mean {word}41.2271 here.").numbers] == [("41.2271", "41.2271")]
    minus = r"\newcommand{\m}{-}" + "\n" + r"Gap \m0.02 and $\pm42{,}930.5$."
    assert [str(n.value) for n in scan(minus).numbers] == ["-0.02", "42930.5"]  # the paper's own minus
    quiet = r"ResNet50 \penalty10000 \tolerance1000 \romannumeral3 see \S3 and GPT4, $\tfrac12 y$."
    assert scan(quiet).numbers == []  # a name the text spells; parameters TeX prints nothing of; a section


def test_a_bound_cell_changed_behind_a_control_word_is_caught(tmp_path: Path) -> None:
    table = "\\begin{tabular}{lc}\nSplit & Perplexity \\\\\nmean & 42.2271 \\\\\n\\end{tabular}\n"
    root = paper(tmp_path, table, {"results.json": {"mean": {"perplexity": 42.2271}}})
    assert bound(root) == {"42.2271": "mean.perplexity"}
    root.write_text(root.read_text().replace("& 42.2271", "& \\relax41.2271"))
    assert "binding_mismatch" in kinds(root)  # before: `stale_binding` only, a warning, and check passed


def test_check_fails_on_an_unlogged_number_behind_a_control_word_without_bindings(tmp_path: Path) -> None:
    require_tool("pdflatex")
    paper(tmp_path, "Perplexity was \\bf41.2271 on the test split.\n", {"results.json": {"ppl": 42.2271}})
    cli = [sys.executable, "-m", "pytest_patchwrite.cli"]
    done = subprocess.run([*cli, "check", "main.tex", "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "main.tex:4: unattested_number 41.2271" in done.stdout
