"""The one display-path rule (`model.display_path`) and the one way to name a file from the paper's directory
(`model.relative_name`), which every face prints paths through."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_patchwrite.model import Violation, display_path, relative_name


def test_a_file_below_the_base_is_shown_relative_and_one_far_outside_as_given(tmp_path: Path) -> None:
    paper = tmp_path / "paper"
    assert display_path(paper / "sec" / "intro.tex", paper) == "sec/intro.tex"
    assert display_path(str(paper / "main.tex"), paper) == "main.tex"
    assert display_path(tmp_path / "other" / "x.tex", paper) == str(tmp_path / "other" / "x.tex")
    assert display_path("/etc/passwd", paper) == "/etc/passwd"
    assert display_path(paper / "main.tex") == str(paper / "main.tex")  # no base: as given


def test_a_name_written_above_the_paper_is_shown_as_written(tmp_path: Path) -> None:
    """`% !patchwrite bib = ../refs.bib` is named `../refs.bib`, not by an absolute path with `..` in it."""
    paper = tmp_path / "paper"
    assert display_path(paper / "../refs.bib", paper) == "../refs.bib"


def test_relative_name_is_always_relative_and_posix(tmp_path: Path) -> None:
    paper = tmp_path / "paper"
    assert relative_name(tmp_path / "results" / "run.json", paper) == "../results/run.json"
    assert relative_name(paper / "logs" / "a.csv", paper) == "logs/a.csv"
    assert relative_name(paper, paper) == "."


def test_a_violation_names_its_file_by_the_rule(tmp_path: Path) -> None:
    v = Violation("placeholder", str(tmp_path / "paper" / "main.tex"), 3, "TODO", "is a placeholder")
    assert v.format(tmp_path).startswith("paper/main.tex:3: placeholder TODO")
    assert v.format(tmp_path / "elsewhere").startswith(f"{tmp_path}/paper/main.tex:3:")


def test_an_unmatched_log_is_named_as_written_wherever_the_check_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A declared log `results/run.json` with no such file: named `results/run.json`, also when the working
    directory lies below the paper (a name relative to the working directory would read `sub/results/run.json`)."""
    from pytest_patchwrite.errors import InputError
    from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
    from pytest_patchwrite.snapshot.manuscript import load_manuscript

    root = tmp_path / "main.tex"
    root.write_text(
        "\\documentclass{article}\n\\begin{document}\nWe reach 91.4\\% accuracy.\n\\end{document}\n",
        encoding="utf-8",
    )
    (tmp_path / "sub").mkdir()
    for cwd in (tmp_path, tmp_path / "sub"):
        monkeypatch.chdir(cwd)
        with pytest.raises(InputError) as info:
            evaluate(load_manuscript(root), EvidenceConfig(logs=["results/run.json"]))  # as an API caller names it
        assert "declares the experimental log results/run.json (" in str(info.value)
