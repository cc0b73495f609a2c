"""Helpers the test modules share (plain functions and data; the fixtures are in conftest.py).

A test module imports from here, never from another test module or from conftest.py
(tests/test_architecture.py checks it).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_patchwrite.flows.prdiff import GitBase, diff_manuscript, format_change
from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.gates.report import PACKAGE_OF
from pytest_patchwrite.proposers import ProposerError
from pytest_patchwrite.snapshot.manuscript import load_manuscript


# real tools, or a skip (in CI: a failure) that names the package to install
def require_tool(name: str, package: str | None = None) -> None:
    """Skip (or, in CI, fail) when a TeX tool is missing, naming the Debian package."""
    if shutil.which(name) is not None:
        return
    reason = f"{name} is not installed: apt-get install {package or PACKAGE_OF.get(name, name)}"
    if os.environ.get("CI"):
        pytest.fail(f"CI must not skip: {reason}")
    pytest.skip(reason)


def require_ctex() -> None:
    """Skip (or fail in CI) when ctexart is missing, naming texlive-lang-chinese."""
    require_tool("xelatex")
    found = subprocess.run(["kpsewhich", "ctexart.cls"], capture_output=True, text=True).stdout.strip()
    if not found:
        reason = "ctexart.cls is not installed: apt-get install texlive-lang-chinese"
        if os.environ.get("CI"):
            pytest.fail(f"CI must not skip: {reason}")
        pytest.skip(reason)


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example_repository(work: Path, papers: tuple[str, ...] = ("paper", "broken-paper")) -> Path:
    """Return `work` as a git repository holding copies of the example papers, committed on `main`."""
    if shutil.which("git") is None:
        pytest.fail("git is needed here: apt-get install git")
    for name in papers:
        shutil.copytree(EXAMPLES / name, work / name)
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.email", "test@example.org"),
        ("config", "user.name", "Test"),
        ("add", "-A"),
        ("commit", "-qm", "base"),
    ):
        subprocess.run(["git", *args], cwd=work, capture_output=True, text=True, check=True)
    return work


def run_cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `patchwrite ARGS` in `cwd` as a user runs it (a subprocess: its exit code and lines are the contract)."""
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=timeout)


# the derived-number tests (test_derived_s3, test_derived_groups): bind a small paper, check it
def bind_rows(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Run `patchwrite bind ROOT`; return the bindings file's rows by token."""
    done = run_cli("bind", root.name, cwd=root.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    rows: dict[str, list[dict[str, Any]]] = {}
    for row in json.loads(root.with_name("main.bindings.json").read_text())["bindings"]:
        rows.setdefault(row["token"], []).append(row)
    return rows


def number_findings(root: Path) -> tuple[int, list[tuple[str, str]]]:
    """Run `patchwrite check ROOT --json`; return its exit code and the number gate's (kind, token) findings."""
    done = run_cli("check", root.name, "--json", "--no-cache", cwd=root.parent)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    found = []
    for manuscript in json.loads(done.stdout)["manuscripts"]:
        for v in manuscript["gates"]["numbers"]["violations"]:
            found.append((v["kind"], v.get("token", "")))
    return done.returncode, found


def rejected_edit(paper: Path, target: str, edit: str, scratch: Path) -> str:
    """Apply `edit` (an EDIT block) to `paper/target` with `patchwrite apply`; assert it is rejected (exit 1) and the
    file keeps its bytes; return what apply printed (stdout and stderr)."""
    before = (paper / target).read_bytes()
    (scratch / "edit.txt").write_text(edit)
    done = run_cli("apply", target, str(scratch / "edit.txt"), cwd=paper)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (paper / target).read_bytes() == before
    return done.stdout + done.stderr


# a git repository and a change against its base (flows/prdiff)
def git(repo: Path, *args: str) -> str:
    """Run git in `repo` and return its output (a failure raises)."""
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def changes(repo: Path, base: str = "main", max_hunk: int | None = None) -> tuple[list[str], list[str], object]:
    """Return the changes and failures of `repo/paper` against `base`, as printed, and the report itself."""
    report = diff_manuscript(
        repo / "paper" / "main.tex", GitBase.open(repo / "paper", base), EvidenceConfig(), max_hunk
    )
    return (
        [format_change(c, repo) for c in report.changes],
        [f.format(repo) for f in report.failures],
        report,
    )


def edit(path: Path, old: str, new: str) -> None:
    """Replace `old` (which must be there) by `new` in the file."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


# a paper of one body for the evidence locks, with the bibliography BIB and optionally the log LOG
BIB = """@string{jrv = "Journal of Robust Vision"}
@comment{a comment block}
@preamble{"\\newcommand{\\noop}[1]{}"}
@article{smith2020, author = {Smith, Jane}, title = {Encoders}, journal = jrv, year = 2020}
@inproceedings{lee2019, author = {Lee, Min}, title = {Baselines}, crossref = {proc2019}}
@proceedings{proc2019, title = {Proceedings}, year = 2019}
"""


def paper(tmp_path: Path, body: str, *, log: dict | None = None, preamble: str = "") -> Path:
    """Return the root of a one-file paper around `body` citing BIB, declaring `log` as results.json if given."""
    (tmp_path / "refs.bib").write_text(BIB)
    if log is not None:
        (tmp_path / "results.json").write_text(json.dumps(log))
    root = tmp_path / "main.tex"
    magic = "% !patchwrite log = results.json\n" if log is not None else ""
    root.write_text(
        f"{magic}\\documentclass{{article}}\n{preamble}\\begin{{document}}\n{body}\n\\bibliography{{refs}}\n\\end{{document}}\n"
    )
    return root


def logged_paper(directory: Path, body: str, logs: dict[str, object]) -> Path:
    """Return the root of a paper declaring `logs` (file name -> a dict written as JSON, or the text), its body on
    line 4 (the magic comment, `\\documentclass`, `\\begin{document}` before it)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in logs.items():
        (directory / name).write_text(content if isinstance(content, str) else json.dumps(content, indent=2))
    root = directory / "main.tex"
    root.write_text(f"% !patchwrite log = {', '.join(logs)}\n\\documentclass{{article}}\n\\begin{{document}}\n"
                    f"{body}\\end{{document}}\n")  # fmt: skip
    return root


def found(root: Path, **config: object) -> list[tuple[str, int, str]]:
    """Return (kind, line, token) of every violation the evidence locks find in `root` under `config`."""
    report = evaluate(load_manuscript(root), EvidenceConfig(**config))  # type: ignore[arg-type]
    every = [*report.citations, *(report.numbers or []), *report.placeholders]
    return [(v.kind, v.line, v.token) for v in every]


LOG = {"acc": 0.91437, "baseline": 68.2, "layers": 12, "lr": "3e-4", "runs": [{"f1": 0.8812}]}


# a literature-review judge's reply (autoraters)
def score(**overrides: Any) -> dict[str, Any]:
    """Return a valid literature-review reply (overall 56), with `overrides` in place of its fields."""
    axes = {
        "coverage_and_completeness": 60,
        "relevance_and_focus": 70,
        "critical_analysis_and_synthesis": 55,
        "positioning_and_novelty": 60,
        "organization_and_writing": 70,
        "citation_practices_and_rigor": 60,
    }
    data: dict[str, Any] = {
        "paper_title": "T",
        "citation_statistics": {"estimated_unique_citations": 40, "citation_density_assessment": "appropriate",
                                "breadth_across_subareas": "moderate", "comparison_to_baseline": "near",
                                "notes": ""},
        "axis_scores": {a: {"score": s, "justification": "j"} for a, s in axes.items()},
        "penalties": [{"reason": "weak gap statement", "points_deducted": 5}],
        "summary": {"strengths": ["s"], "weaknesses": ["w"], "top_improvements": ["i"]},
        "overall_score": 56,
    }  # fmt: skip
    data.update(overrides)
    return data


# the bundled local model and an OpenAI-compatible server for it (proposers)
def require_local_model() -> None:
    """Skip (in CI: fail) when llama-cpp-python or the bundled model is missing."""
    try:
        from pytest_patchwrite.proposers.local import bundled_model, import_llama_cpp

        import_llama_cpp()
        bundled_model()
    except (ImportError, ProposerError) as exc:
        reason = f"the local proposer needs pip install 'pytest-patchwrite[local]' ({exc})"
        if os.environ.get("CI"):
            pytest.fail(f"CI must not skip: {reason}")
        pytest.skip(reason)


@contextlib.contextmanager
def llama_cpp_server(tmp_path: Path) -> Iterator[str]:
    """Run `python -m llama_cpp.server` with the bundled model on a free loopback port; yield its /v1 URL."""
    require_local_model()
    from pytest_patchwrite.proposers.local import bundled_model

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(tmp_path / "server.log", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(bundled_model()), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096", "--n_threads", "1"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not start: {(tmp_path / 'server.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(30)
        log.close()


# --- small papers for the binder tests (a root declaring its logs, and what the binder decided) ---


def bind_paper(directory: Path, body: str, logs: dict[str, object]) -> Path:
    """Write a root manuscript declaring its logs, and the logs (dicts as JSON, strings as they are)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in logs.items():
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        (directory / name).write_text(text)
    root = directory / "main.tex"
    root.write_text(
        f"% !patchwrite log = {', '.join(logs)}\n\\documentclass{{article}}\n\\begin{{document}}\n{body}"
        "\\end{document}\n"
    )
    return root


def bind_decisions(root: Path) -> dict[str, tuple[str, str, str]]:
    """Return token -> (how, log file name, locator) for every bound number, ("unbound", "", "") for the others."""
    from pytest_patchwrite.flows.bind import bind_root

    result = bind_root(root, EvidenceConfig()).reconciled.result
    out = {b.occurrence.token: (b.how, Path(b.best.entry.log).name, b.best.entry.at) for b in result.bound}
    for b in result.bound:
        if b.best.formula is not None:
            out[b.occurrence.token] = (b.how, str(b.best.formula["op"]), "")
    for occ in [*result.unattested, *result.quiet]:
        out[occ.token] = ("unbound", "", "")
    return out


def bind_noise(n: int, seed: int = 5) -> dict[str, float]:
    """Return `n` logged values in [0.1, 1) (other metrics of the run): they make a value-only match likely."""
    rng = random.Random(seed)
    return {f"probe_{i}": round(rng.uniform(0.1, 0.99), 4) for i in range(n)}
