"""The documentation: the MkDocs site builds strictly, the README stays short and its Quickstart stays as it is."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# CI (.ci/run) and people copy these two lines; they must not change (issue 23)
QUICKSTART = """\
```sh
make demo   # installs what the demo needs (missing TeX Live packages, the package), then runs it on examples/paper
make test   # installs what the tests need (the rest of TeX Live, test tools, the local model), then runs them
```
"""


def _build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(project / "mkdocs.yml"), "-d", str(site)],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=300,
    )


def _copy_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", project / "docs")
    return project


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = _build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    # mkdocs logs a warning as `WARNING -  ...`; --strict already fails on one, this names it
    assert not [line for line in done.stderr.splitlines() if line.startswith("WARNING")], done.stderr
    pages = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    for page in pages:
        built = tmp_path / "site" / ("index.html" if page == "index" else f"{page}/index.html")
        assert built.is_file(), f"docs/{page}.md was not built"


@pytest.mark.parametrize(
    "breakage",
    [
        "[a page that does not exist](no-such-page.md)",
        "[an anchor that does not exist](cli.md#no-such-section)",
    ],
)
def test_a_broken_link_fails_the_build(tmp_path: Path, breakage: str) -> None:
    project = _copy_project(tmp_path)
    index = project / "docs" / "index.md"
    index.write_text(index.read_text() + f"\n{breakage}\n")
    done = _build(project, tmp_path / "site")
    assert done.returncode != 0, "a broken link passed the strict build"
    assert "no-such" in done.stdout + done.stderr


def test_a_page_missing_from_the_nav_fails_the_build(tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    (project / "docs" / "orphan.md").write_text("# Orphan\n")
    done = _build(project, tmp_path / "site")
    assert done.returncode != 0
    assert "orphan.md" in done.stdout + done.stderr


def test_the_quickstart_commands_are_unchanged() -> None:
    text = README.read_text(encoding="utf-8")
    quickstart = text[text.index("## Quickstart") :]
    quickstart = quickstart[: quickstart.index("\n## ", 1)]
    assert QUICKSTART in quickstart


def test_the_readme_is_short_and_its_links_resolve() -> None:
    data = README.read_bytes()
    assert len(data) < 12 * 1024, f"README.md is {len(data)} bytes; the reference belongs in docs/"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", data.decode())
    local = [link for link in links if "://" not in link]
    assert any(link.startswith("docs/") for link in local)
    for link in local:
        assert (ROOT / link).exists(), f"README.md links to {link}, which does not exist"
