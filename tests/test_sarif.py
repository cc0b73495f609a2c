"""SARIF 2.1.0 output, validated against OASIS's schema (vendored in tests/sarif/): check, diff and pytest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from support import example_repository, require_tool

from pytest_patchwrite.commands.sarif import sarif_log
from pytest_patchwrite.kinds import KINDS
from pytest_patchwrite.model import WARNING, Violation

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())

BROKEN = {  # examples/broken-paper: one fault per gate
    ("undefined_control_sequence", "sections/intro.tex", 3),
    ("unknown_cite", "sections/results.tex", 4),
    ("unattested_number", "sections/results.tex", 3),
    ("placeholder", "sections/results.tex", 5),
}


def valid(log: dict) -> dict:
    """Return the log after asserting it is valid SARIF 2.1.0."""
    errors = sorted(VALIDATOR.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    return log


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding both example papers, committed."""
    return example_repository(tmp_path)


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def located(log: dict) -> set[tuple[str, str, int]]:
    out = set()
    for r in log["runs"][0]["results"]:
        physical = r["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        out.add((r["ruleId"], physical["artifactLocation"]["uri"], physical["region"]["startLine"]))
    return out


def test_check_sarif_on_the_broken_paper(repo: Path) -> None:
    require_tool("pdflatex")
    # run from a subdirectory: the paths are relative to the repository root all the same
    done = cli(repo / "broken-paper", "check", "main.tex", "--sarif", "../out/check.sarif")
    assert done.returncode == 1, done.stderr
    log = valid(json.loads((repo / "out" / "check.sarif").read_text()))
    assert log["version"] == "2.1.0"
    assert located(log) == {(kind, f"broken-paper/{file}", line) for kind, file, line in BROKEN}
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == {kind for kind, _, _ in BROKEN}
    for result in run["results"]:
        rule = rules[result["ruleIndex"]]
        assert rule["id"] == result["ruleId"] and result["level"] == "error"
        entry = KINDS[rule["id"]]
        assert rule["fullDescription"]["text"] == entry.trigger
        assert entry.fix in rule["help"]["text"] and entry.suppress in rule["help"]["markdown"]
    cite = next(r for r in run["results"] if r["ruleId"] == "unknown_cite")
    assert cite["message"]["text"] == "fake2024 is not defined (bib: refs.bib; 3 keys defined)"


def test_check_sarif_on_a_clean_paper_has_no_results(repo: Path) -> None:
    require_tool("pdflatex")
    done = cli(repo, "check", "paper/main.tex", "--json", "--sarif", "clean.sarif")
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # --json still prints its object
    log = valid(json.loads((repo / "clean.sarif").read_text()))
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_diff_sarif(repo: Path) -> None:
    results = repo / "paper" / "sections" / "results.tex"
    results.write_text(results.read_text().replace("Ours & 91.4 & 86.9", "Ours & 91.4 & 88.8"))
    done = cli(repo, "diff", "paper/main.tex", "--base", "main", "--sarif", "diff.sarif")
    assert done.returncode == 1, done.stderr
    log = valid(json.loads((repo / "diff.sarif").read_text()))
    assert located(log) == {("unattested_number", "paper/sections/results.tex", 15)}


def test_the_sarif_file_gets_its_missing_directories(repo: Path) -> None:
    # every output path (--sarif, -o, --pages, --out-tree) makes the directories above it, as pytest's --junitxml
    done = cli(repo, "diff", "paper/main.tex", "--base", "main", "--sarif", "reports/ci/diff.sarif")
    assert done.returncode == 0, done.stderr
    assert valid(json.loads((repo / "reports" / "ci" / "diff.sarif").read_text()))["runs"][0]["results"] == []


def test_an_unwritable_sarif_file_is_exit_2(repo: Path) -> None:
    (repo / "blocker").write_text("a file, not a directory")
    done = cli(repo, "diff", "paper/main.tex", "--base", "main", "--sarif", "blocker/x.sarif")
    assert done.returncode == 2
    assert done.stderr.strip() == "patchwrite: error: blocker/x.sarif: cannot write the SARIF file there"


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_pytest_writes_the_sarif_once(repo: Path, workers: list[str]) -> None:
    require_tool("pdflatex")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "paper", "broken-paper", "-p", "no:cacheprovider", *workers,
         "--patchwrite-sarif", "results.sarif"],
        cwd=repo, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:]
    log = valid(json.loads((repo / "results.sarif").read_text()))
    assert len(log["runs"]) == 1
    found = [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in log["runs"][0]["results"]
    ]
    assert sorted(found) == sorted((kind, f"broken-paper/{file}") for kind, file, _ in BROKEN)
    assert not list(repo.glob("*.patchwrite-tmp")), "a temp file of the SARIF write was left"


def test_levels_hostile_text_and_files_outside_the_repository(tmp_path: Path) -> None:
    inside = tmp_path / "repo" / "main.tex"
    inside.parent.mkdir()
    log = valid(
        sarif_log(
            [
                Violation("duplicate_entry", str(tmp_path / "repo" / "refs.bib"), 7, "k", "is defined twice", WARNING),
                Violation("unknown_cite", str(inside), 3, "\x1b[31mx](1)", "[see](https://evil) is not defined"),
                Violation("timeout", str(inside), 0, "", "the engine did not finish"),
                Violation("outside_tree", "/elsewhere/x.tex", 2, "", "leads outside"),
                Violation("moved_number", str(inside), 4, "16", "number 12 -> 16"),
            ],
            root=tmp_path / "repo",
        )
    )
    results = log["runs"][0]["results"]
    assert [r["level"] for r in results] == ["warning", "error", "error", "error", "note"]
    text = results[1]["message"]["text"]
    assert "\x1b" not in text and text == "\\x1b\\[31mx\\](1) \\[see\\](https://evil) is not defined"
    assert "region" not in results[2]["locations"][0]["physicalLocation"]  # line 0: no region (SARIF needs >= 1)
    assert results[3]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "file:///elsewhere/x.tex"}
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert levels["duplicate_entry"] == "warning" and levels["moved_number"] == "note"


def test_the_schema_rejects_what_is_not_sarif() -> None:
    # the validator is live: a level SARIF does not have and a missing version are refused
    log = sarif_log([Violation("unknown_cite", "/r/a.tex", 1, "k", "m")], root=Path("/r"))
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert any("fatal" in e.message for e in VALIDATOR.iter_errors(log))
    del log["version"]
    assert any("version" in e.message for e in VALIDATOR.iter_errors(log))
