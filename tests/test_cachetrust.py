"""Caches a pull request cannot forge: every entry sealed with the user's secret, never inside the work tree."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support import EXAMPLES, require_tool

from pytest_patchwrite.gates import cachetrust, warm
from pytest_patchwrite.gates.compile import CompileGate

BROKEN = "\\documentclass{article}\n\\begin{document}\nHello \\undefinedmacroxyz.\n\\end{document}\n"


def _fresh_secret(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Point the user cache at `home` (another user's, or a fresh one) and forget the secret read so far."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.setattr(cachetrust, "_secrets", {})
    warm.STORE.clear()


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.glob("??/*.json"))


def _broken_paper(tmp_path: Path) -> Path:
    paper = tmp_path / "repo" / "paper"
    paper.mkdir(parents=True)
    (paper / "main.tex").write_text(BROKEN)
    return paper / "main.tex"


def test_secret_is_private_and_made_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_secret(monkeypatch, tmp_path / "xdg")
    first = cachetrust.secret()
    path = tmp_path / "xdg" / "patchwrite" / "secret"
    assert first is not None and stat.S_IMODE(path.stat().st_mode) == 0o600
    monkeypatch.setattr(cachetrust, "_secrets", {})
    assert cachetrust.secret() == first  # read back, not made again
    sealed = cachetrust.seal("verdict", "k", {"ok": False})
    assert cachetrust.unseal("verdict", "k", sealed) == ({"ok": False}, False)
    assert cachetrust.unseal("verdict", "other-key", sealed) == (None, True)  # an entry moved to another key
    assert cachetrust.unseal("warm", "k", sealed) == (None, True)


def test_a_readable_secret_turns_the_disk_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    _fresh_secret(monkeypatch, tmp_path / "xdg")
    path = tmp_path / "xdg" / "patchwrite" / "secret"
    path.parent.mkdir(parents=True)
    path.write_text("0" * 64)
    path.chmod(0o644)  # another user could read it, and so forge entries
    assert cachetrust.secret() is None
    assert cachetrust.seal("verdict", "k", {}) is None
    assert "not a private file" in capsys.readouterr().err


def test_an_empty_secret_left_by_a_full_disk_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    _fresh_secret(monkeypatch, tmp_path / "xdg")
    path = tmp_path / "xdg" / "patchwrite" / "secret"
    path.parent.mkdir(parents=True)
    path.touch(mode=0o600)  # what an older version's create-then-write left when the write hit ENOSPC
    made = cachetrust.secret()
    assert made is not None and len(path.read_bytes()) == 64 and made == path.read_bytes()
    assert "warning" not in capsys.readouterr().err
    assert [p.name for p in path.parent.iterdir()] == ["secret"]  # no temporary copy left beside it


@pytest.mark.parametrize("how", ["planted", "other-user", "tampered"])
def test_a_forged_verdict_is_ignored_and_counted(how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool("pdflatex")
    root = _broken_paper(tmp_path)
    cache = tmp_path / "cache"
    if how == "other-user":  # a valid entry, sealed with someone else's secret, copied into our cache
        _fresh_secret(monkeypatch, tmp_path / "other-user")
    first = CompileGate(cache_dir=cache, warm_starts=False).compile(root)
    assert not first.ok and not first.cached
    [entry] = _entries(cache)
    data = json.loads(entry.read_text())
    payload = json.loads(data["payload"])
    forged = {**payload, "ok": True, "violations": [], "messages": []}
    if how == "planted":  # what a pull request could commit: the entry as an older version stored it
        entry.write_text(json.dumps(forged))
    elif how == "tampered":
        entry.write_text(json.dumps({"hmac": data["hmac"], "payload": json.dumps(forged)}))
    else:
        _fresh_secret(monkeypatch, tmp_path / "our-user")
    gate = CompileGate(cache_dir=cache, warm_starts=False)
    again = gate.compile(root)
    assert (again.ok, again.cached, again.cache_rejected, gate.cache_rejected) == (False, False, 1, 1)
    assert again.violations[0].kind == "undefined_control_sequence"
    # the entry written back is ours: the next compile is a verified hit
    third = gate.compile(root)
    assert (third.cached, third.ok, third.cache_rejected) == (True, False, 0)


def test_a_forged_warm_state_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool("pdflatex")
    root = tmp_path / "paper" / "main.tex"
    root.parent.mkdir()
    root.write_text(
        "\\documentclass{article}\n\\begin{document}\n\\section{A}\\label{a} See \\ref{a}.\n\\end{document}\n"
    )
    cache = tmp_path / "cache"
    CompileGate(cache_dir=cache).compile(root)
    [state] = sorted((cache / "warm").glob("??/*.json"))
    data = json.loads(state.read_text())
    state.write_text(json.dumps(json.loads(data["payload"])))  # the same state, unsealed
    warm.STORE.clear()
    gate = CompileGate(cache_dir=cache, use_cache=True)
    report = gate.compile(root, {root: root.read_text().replace("See", "Now see")})
    assert report.ok and report.start == "cold" and report.cache_rejected == 1


def test_a_cache_dir_inside_the_work_tree_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_tool("pdflatex")
    root = _broken_paper(tmp_path)
    (tmp_path / "repo" / ".git").mkdir()
    inside = tmp_path / "repo" / ".pytest_cache" / "d" / "patchwrite"
    gate = CompileGate(cache_dir=inside)
    report = gate.compile(root)
    assert not report.ok and not inside.exists()
    assert "lies inside the work tree" in capsys.readouterr().err
    assert _entries(cachetrust.cache_home() / "compile")  # the user cache directory instead


def test_check_json_counts_rejected_entries(tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = _broken_paper(tmp_path)
    xdg = tmp_path / "xdg"
    env = {**os.environ, "XDG_CACHE_HOME": str(xdg)}
    code = "import sys; from pytest_patchwrite.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", code, "check", "--json", str(root)]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert json.loads(first.stdout)["cache_rejected"] == 0
    for entry in _entries(xdg / "patchwrite" / "compile"):
        payload = json.loads(json.loads(entry.read_text())["payload"])
        entry.write_text(json.dumps({**payload, "ok": True, "violations": []}))
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    out = json.loads(second.stdout)
    assert second.returncode == 1 and out["cache_rejected"] == 1
    assert out["manuscripts"][0]["gates"]["compile"]["cache_rejected"] == 1
    text = subprocess.run(cmd[:-2] + [str(root)], env=env, capture_output=True, text=True, timeout=300)
    assert "cache entries rejected" not in text.stderr  # the second run stored a verified entry again


def test_pytest_keeps_no_cache_in_the_checkout(pytester: pytest.Pytester) -> None:
    require_tool("pdflatex")
    (pytester.path / ".git").mkdir()
    pytester.makefile(".tex", main=BROKEN)
    first = pytester.runpytest_subprocess()
    first.assert_outcomes(failed=1, passed=2, skipped=1)  # compile fails; numbers: no log
    assert not list(pytester.path.rglob("*.json"))
    # what a pull request could commit: pytest's cache directory holding a passing verdict
    xdg = Path(os.environ["XDG_CACHE_HOME"])
    for entry in (xdg / "patchwrite" / "compile").glob("??/*.json"):
        payload = json.loads(json.loads(entry.read_text())["payload"])
        planted = pytester.path / ".pytest_cache" / "d" / "patchwrite" / entry.parent.name / entry.name
        planted.parent.mkdir(parents=True, exist_ok=True)
        planted.write_text(json.dumps({**payload, "ok": True, "violations": [], "messages": []}))
    shutil.rmtree(xdg / "patchwrite")
    pytester.makeini("[pytest]\npatchwrite_cache_dir = .pytest_cache/d/patchwrite\n")
    second = pytester.runpytest_subprocess("-W", "default")
    second.assert_outcomes(failed=1, passed=2, skipped=1)
    assert "lies inside the work tree" in second.stdout.str()
    assert "verdict cache hits: 0" in second.stdout.str()


def test_a_verdict_cached_by_other_code_is_not_reused(tmp_path: Path) -> None:
    """tester3 C3: a fixed gate kept answering from the verdicts the old code cached ("compile ok (cached)")."""
    require_tool("pdflatex")
    code = tmp_path / "code"
    shutil.copytree(Path(__file__).resolve().parents[1] / "pytest_patchwrite", code / "pytest_patchwrite",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    paper = tmp_path / "paper"
    shutil.copytree(EXAMPLES / "paper", paper)
    env = {**os.environ, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def check() -> str:
        done = subprocess.run([sys.executable, "-m", "pytest_patchwrite.cli", "check", "main.tex"], cwd=paper,
                              env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout.splitlines()[0]

    assert "cached" not in check()
    assert "cached" in check()  # the same code, the same bytes: the verdict is reused
    gate = code / "pytest_patchwrite" / "gates" / "located.py"
    gate.write_text(gate.read_text() + "\n# a fix of a gate\n")
    assert "cached" not in check()  # other code: judged again
