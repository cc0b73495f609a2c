"""Shared test helpers: real engines, or a skip that names the package to install."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_patchwrite.gates.report import PACKAGE_OF


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
    import subprocess

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


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep verdict caches of tests out of the user's cache directory, and step summaries off the CI page."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    # under GitHub Actions the runs of pytester would write their summaries onto the real run page
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


# the compile-gate corpus holds failing manuscripts on purpose, real_world the samples test_real_world checks:
# inputs, not our own checks
collect_ignore_glob = ["tex/*", "real_world/*", "bind_papers/*"]
