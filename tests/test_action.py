"""The GitHub Action: action.yml is valid action metadata, and its steps' scripts run end to end on the example
papers with GitHub's environment variables pointing at temp files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from support import example_repository, require_tool

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
SARIF_SCHEMA = json.loads((Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def _validate_builtin(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_action_yml_is_valid_action_metadata() -> None:
    done = _validate_builtin("vendor.github-actions", ROOT / "action.yml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    broken = dict(ACTION, runs={"using": "composite", "steps": [{"run": "true"}]})  # a run step needs `shell`
    (tmp_path / "action.yml").write_text(yaml.safe_dump(broken))
    assert _validate_builtin("vendor.github-actions", tmp_path / "action.yml").returncode == 1


def test_the_example_workflow_is_valid_and_uses_the_action() -> None:
    path = ROOT / "examples" / "ci" / "patchwrite.yml"
    done = _validate_builtin("vendor.github-workflows", path)
    assert done.returncode == 0, done.stdout + done.stderr
    workflow = yaml.safe_load(path.read_text())
    steps = workflow["jobs"]["manuscript"]["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert uses == ["actions/checkout", "", "actions/checkout", "./.patchwrite"]
    assert steps[0]["with"]["persist-credentials"] is False
    assert steps[1]["run"].startswith("test ! -e .patchwrite && test ! -L .patchwrite")
    # the action is a checkout of its own, at a revision the pull request cannot change: never its head (`uses: ./`)
    action = steps[2]["with"]
    assert action["path"] == ".patchwrite" and action["persist-credentials"] is False
    assert action["repository"] == "${{ vars.PATCHWRITE_REPOSITORY || github.repository }}"
    assert action["ref"] == "${{ vars.PATCHWRITE_REF || github.event.pull_request.base.sha }}"
    assert "OWNER" not in path.read_text()  # no placeholder that fails at run time
    assert len(path.read_text().splitlines()) < 40


def test_the_action_never_runs_the_pull_requests_code() -> None:
    assert set(ACTION["inputs"]) >= {"paper", "base", "evidence-from", "pages", "sarif"}
    runs = [s["run"] for s in STEPS if "run" in s]
    for text in runs:
        # an expression pasted into a shell line is script injection; inputs go through `env:`
        assert "${{" not in text, text
    install = next(s["run"] for s in STEPS if "pip install" in s.get("run", ""))
    assert '"$GITHUB_ACTION_PATH"' in install and "GITHUB_WORKSPACE" not in install
    python_lines = [line for text in runs for line in text.splitlines() if re.match(r"\s*python\b", line)]
    assert python_lines and all(" -I " in line or "-m pip" in line for line in python_lines)
    for text in runs:
        for script in re.findall(r"\$GITHUB_ACTION_PATH/(action/[\w.]+)", text):
            assert (ROOT / script).is_file(), script


def test_install_script_finds_tex_and_a_working_sandbox() -> None:
    require_tool("pdflatex")
    require_tool("bwrap", "bubblewrap")
    done = subprocess.run(["bash", str(ROOT / "action" / "install.sh")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "TeX Live and the sandbox are ready" in done.stdout


def test_install_script_refuses_a_bad_package_name() -> None:
    env = dict(os.environ, PATCHWRITE_TEX_PACKAGES="texlive-latex-base ;rm")
    done = subprocess.run(["bash", str(ROOT / "action" / "install.sh")], capture_output=True, text=True, env=env)
    assert done.returncode == 2
    assert "::error::tex-packages: ';rm' is not a Debian package name" in done.stderr


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout as actions/checkout leaves it: both example papers committed, the base at origin/main."""
    work = example_repository(tmp_path / "work")
    subprocess.run(["git", "update-ref", "refs/remotes/origin/main", "HEAD"], cwd=work, check=True)
    return work


def github_env(tmp_path: Path, workspace: Path, fork: bool = False, pull_request: bool = True) -> dict[str, str]:
    """Return the environment GitHub gives a step, its files in tmp_path."""
    event = tmp_path / "event.json"
    head = "stranger/paper" if fork else "owner/paper"
    event.write_text(
        json.dumps({"pull_request": {"number": 7, "head": {"repo": {"full_name": head}}}} if pull_request else {})
    )
    for name in ("summary.md", "output.txt"):
        (tmp_path / name).write_text("")
    env = dict(
        os.environ,
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_REPOSITORY="owner/paper",
        GITHUB_EVENT_PATH=str(event),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
        GITHUB_OUTPUT=str(tmp_path / "output.txt"),
        GITHUB_ACTION_PATH=str(ROOT),
        RUNNER_TEMP=str(tmp_path / "runner-temp"),
        PYTHONPATH=str(ROOT),
    )
    if pull_request:
        env["GITHUB_BASE_REF"] = "main"
    return env


def run_step(env: dict[str, str], **inputs: str) -> subprocess.CompletedProcess[str]:
    """Run action.yml's `run` step as GitHub would: its shell text, its env with the inputs substituted."""
    step = next(s for s in STEPS if s.get("id") == "run")
    defaults = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    values = {**defaults, **{k.replace("_", "-"): v for k, v in inputs.items()}}
    step_env = {
        k: re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: values[m.group(1)], v) for k, v in step["env"].items()
    }
    # `python -I` ignores PYTHONPATH; the test runs the step with this checkout's package on the path instead
    text = step["run"].replace("python -I ", f"{sys.executable} ")
    return subprocess.run(
        ["bash", "-e", "-c", text], cwd=env["GITHUB_WORKSPACE"], env={**env, **step_env},
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def outputs(tmp_path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines())


def sarif_results(path: str) -> list[tuple[str, str, int]]:
    log = json.loads(Path(path).read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    out = []
    for r in log["runs"][0]["results"]:
        physical = r["locations"][0]["physicalLocation"]
        out.append((r["ruleId"], physical["artifactLocation"]["uri"], physical.get("region", {}).get("startLine", 0)))
    return sorted(out)


def test_a_pull_request_that_moves_a_number(tmp_path: Path, workspace: Path) -> None:
    require_tool("pdflatex")
    results = workspace / "paper" / "sections" / "results.tex"
    results.write_text(results.read_text().replace("Ours & 91.4 & 86.9", "Ours & 91.4 & 88.8"))
    done = run_step(github_env(tmp_path, workspace), paper="paper/main.tex")
    assert done.returncode == 0, done.stderr  # the step itself; the verdict is its exit-code output
    out = outputs(tmp_path)
    assert out["exit-code"] == "1" and out["upload-sarif"] == "true" and out["fork"] == "false"
    assert out["dir"] == str(tmp_path / "runner-temp" / "patchwrite")
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert annotations == [
        "::error file=paper/sections/results.tex,line=15::unattested_number 88.8 is not attested (policy: decimals; "
        "logs: results.json); add it to a log or mark the line `%25 patchwrite: ignore number`"
    ]
    assert sarif_results(out["sarif"]) == [("unattested_number", "paper/sections/results.tex", 15)]
    summary = (tmp_path / "summary.md").read_text()
    assert "| paper/main.tex | ✅ passed | ✅ passed | ❌ failed (1) | ✅ passed | ❌ failed (1) |" in summary
    assert "Changes of paper/main.tex against origin/main:" in summary
    assert "- paper/sections/results.tex:15: number 86.9 -\\> 88.8 (not attested by results.json)" in summary
    assert "SARIF: 1 result(s), uploaded to code scanning." in summary
    report = json.loads((Path(out["dir"]) / "report.json").read_text())
    assert report["manuscripts"][0]["gates"]["numbers"]["ok"] is False
    assert json.loads((Path(out["dir"]) / "diff.json").read_text())[0]["changes"][0]["kind"] == "moved_number"
    verdict = next(s for s in STEPS if s.get("name") == "The verdict")
    final = subprocess.run(["bash", "-c", verdict["run"]], env={"CODE": out["exit-code"]})
    assert final.returncode == 1


def test_a_fork_keeps_the_sarif_as_an_artifact(tmp_path: Path, workspace: Path) -> None:
    require_tool("pdflatex")
    done = run_step(github_env(tmp_path, workspace, fork=True), paper="paper")
    out = outputs(tmp_path)
    assert out["exit-code"] == "0", done.stdout + done.stderr
    assert (out["upload-sarif"], out["fork"]) == ("false", "true")
    assert sarif_results(out["sarif"]) == []
    summary = (tmp_path / "summary.md").read_text()
    assert "kept as an artifact (a fork's token cannot upload it)" in summary
    assert not [line for line in done.stdout.splitlines() if line.startswith("::error")]


def test_a_folder_outside_a_pull_request(tmp_path: Path, workspace: Path) -> None:
    require_tool("pdflatex")
    # a push: no base, so no diff; the folder holds two roots, each checked
    done = run_step(github_env(tmp_path, workspace, pull_request=False), paper=".", sarif="true")
    out = outputs(tmp_path)
    assert out["exit-code"] == "1", done.stdout + done.stderr
    assert not (Path(out["dir"]) / "diff.json").exists()
    assert sarif_results(out["sarif"]) == [
        ("placeholder", "broken-paper/sections/results.tex", 5),
        ("unattested_number", "broken-paper/sections/results.tex", 3),
        ("undefined_control_sequence", "broken-paper/sections/intro.tex", 3),
        ("unknown_cite", "broken-paper/sections/results.tex", 4),
    ]
    summary = (tmp_path / "summary.md").read_text()
    assert "2 manuscript(s)" in summary and "| paper/main.tex | ✅ passed" in summary
    assert len([line for line in done.stdout.splitlines() if line.startswith("::error file=")]) == 4


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"paper": "nope/main.tex"}, "nope/main.tex"),
        ({"paper": ""}, "the action needs the `paper` input"),
        ({"paper": "paper", "sarif": "yes"}, "PATCHWRITE_SARIF: 'yes': use true or false"),
        ({"paper": "paper", "base": "--upload-pack=evil"}, "is not a git revision"),
    ],
)
def test_bad_inputs_are_one_error_and_exit_2(tmp_path: Path, workspace: Path, inputs: dict, message: str) -> None:
    done = run_step(github_env(tmp_path, workspace), **inputs)
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and message in errors[0], done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "patchwrite exit code: 2" in done.stdout
    if inputs["paper"] == "nope/main.tex":  # the check ran and could not judge: nothing goes to code scanning
        assert outputs(tmp_path)["upload-sarif"] == "false"
        assert "SARIF: 0 result(s), not uploaded: no verdict (exit 2)." in (tmp_path / "summary.md").read_text()


def test_pages_and_evidence_from_are_refused_or_skipped_when_missing(tmp_path: Path, workspace: Path) -> None:
    require_tool("pdflatex")
    done = run_step(github_env(tmp_path, workspace), paper="paper", pages="true")
    options = subprocess.run(
        [sys.executable, "-m", "pytest_patchwrite.cli", "diff", "--help"], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout  # fmt: skip
    if "--pages" in options:
        assert outputs(tmp_path)["pages"], done.stdout
    else:
        assert "::warning::pages: this version of patchwrite has no `diff --pages`" in done.stdout
        assert outputs(tmp_path)["exit-code"] == "0"


def test_the_artifact_link_is_added_to_the_summary(tmp_path: Path, workspace: Path) -> None:
    env = github_env(tmp_path, workspace)
    script = str(ROOT / "action" / "run.py")
    url = "https://github.com/owner/paper/actions/runs/1/artifacts/2"
    done = subprocess.run([sys.executable, script, "link", url], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"[the patchwrite artifact]({url})" in (tmp_path / "summary.md").read_text()
    bad = subprocess.run(
        [sys.executable, script, "link", "javascript:alert(1)"], env=env, capture_output=True, text=True
    )
    assert bad.returncode == 2 and bad.stdout.startswith("::error::")


def test_a_package_planted_in_the_checkout_is_not_imported(tmp_path: Path, workspace: Path) -> None:
    # what action.yml runs: python -I, so the checkout (cwd) is not on sys.path
    planted = workspace / "pytest_patchwrite"
    planted.mkdir()
    (planted / "__init__.py").write_text("open('PLANTED', 'w').write('ran')\nraise SystemExit(0)\n")
    env = github_env(tmp_path, workspace)
    env.pop("PYTHONPATH")
    url = "https://github.com/owner/paper/actions/runs/1/artifacts/2"
    done = subprocess.run(
        [sys.executable, "-I", str(ROOT / "action" / "run.py"), "link", url], cwd=workspace, env=env,
        capture_output=True, text=True,
    )  # fmt: skip
    assert not (workspace / "PLANTED").exists()
    # without -I the same command imports it: the check above can fail
    subprocess.run([sys.executable, "-c", "import pytest_patchwrite"], cwd=workspace, env=env, capture_output=True)
    assert (workspace / "PLANTED").exists()
    assert done.returncode == 0, done.stderr


def test_the_summary_shows_the_changed_pages(tmp_path: Path, workspace: Path) -> None:
    require_tool("pdflatex")
    require_tool("pdftoppm", "poppler-utils")
    results = workspace / "paper" / "sections" / "results.tex"
    results.write_text(results.read_text().replace("Ours & 91.4 & 86.9", "Ours & 91.4 & 88.8"))
    done = run_step(github_env(tmp_path, workspace), paper="paper/main.tex", pages="true")
    assert done.returncode == 0, done.stderr
    pages = Path(outputs(tmp_path)["pages"])
    drawn = sorted(p.name for p in (pages / "0").iterdir())
    assert drawn == ["index.html", "page-002-after.png", "page-002-before.png"]
    summary = (tmp_path / "summary.md").read_text()
    assert "Changed pages of paper/main.tex (`pages/0/index.html` in the artifact):" in summary
    assert "| 2 | 2 | 1 | number 86.9 -\\> 88.8 (not attested by results.json) |" in summary  # a cell, escaped
    assert "1 changed page(s) drawn, 1 unchanged (counted, not drawn)." in summary
