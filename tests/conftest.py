"""The fixtures the test modules share (their plain helpers are in support.py; no test module imports this file)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import EXAMPLES, git


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep verdict caches of tests out of the user's cache directory, and step summaries off the CI page."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    # under GitHub Actions the runs of pytester would write their summaries onto the real run page
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding the example paper under paper/, committed on `main` (a module whose tests need
    other papers defines its own `repo`)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: apt-get install git")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "test@example.org")
    git(tmp_path, "config", "user.name", "Test")
    shutil.copytree(EXAMPLES / "paper", tmp_path / "paper")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    return tmp_path


# the compile-gate corpus holds failing manuscripts on purpose, real_world the samples test_real_world checks:
# inputs, not our own checks
collect_ignore_glob = ["tex/*", "real_world/*", "bind_papers/*"]
