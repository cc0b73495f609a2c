"""Fault injection: a broken machine is never the manuscript's fault (issue: environment faults).

Real faults only: small filesystems made in a user and mount namespace of our own (`unshare -Urm`, no host
mount rights needed, as root and as any user), read-only bind mounts, an engine SIGKILLed from outside, an
address-space cap set with `prlimit`, another writer saving during `apply`, corrupted cache files. Each test
asserts the exit code, a message naming the problem, the file's bytes, that a rerun without the fault gives the
right verdict, and that nothing is left behind after `clean`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.corpus.stress import StressOptions, detection_job
from pytest_patchwrite.engine import sandbox, sandboxcmd
from pytest_patchwrite.engine.sandboxlimits import Limits
from pytest_patchwrite.errors import EnvironmentFault
from pytest_patchwrite.files import envfaults
from pytest_patchwrite.gates import outcomes
from pytest_patchwrite.numbers.logread import load_logs

REPO = Path(__file__).resolve().parents[1]
PW = f"{shlex.quote(sys.executable)} -m pytest_patchwrite.cli"
PAPER = "\\documentclass{article}\n\\begin{document}\nHello world.\n\\end{document}\n"
# about two seconds of pdflatex here: long enough to act while the engine runs, the wait is on the process itself
SLOW = (
    "\\documentclass{article}\n\\newcount\\pwn\n\\begin{document}\n"
    "\\loop\\advance\\pwn by 1 \\ifnum\\pwn<4000000 \\repeat\nHello world.\n\\end{document}\n"
)
EDIT = "```EDIT 5 5\nHello edited world.\n```\n"  # line 5 of SLOW (line 3 of PAPER is its text line)

pytestmark = pytest.mark.xdist_group("envfaults")


@pytest.fixture(autouse=True)
def _tools() -> None:
    require_tool("pdflatex")
    require_tool("bwrap", "bubblewrap")
    require_tool("unshare", "util-linux")
    require_tool("prlimit", "util-linux")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATCHWRITE_")}
    env["PYTHONPATH"] = str(REPO)
    env["TMPDIR"] = str(tmp_path / "tmpdir")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["MALLOC_ARENA_MAX"] = "1"  # threads then reserve no 64 MB arenas: the address-space test measures TeX
    (tmp_path / "tmpdir").mkdir(exist_ok=True)
    env.update(extra)
    return env


def _paper(tmp_path: Path, text: str = PAPER, name: str = "paper") -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "main.tex").write_text(text)
    (directory / "edit.txt").write_text(EDIT if text == SLOW else EDIT.replace("EDIT 5 5", "EDIT 3 3"))
    return directory / "main.tex"


def _cli(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_patchwrite.cli", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout)  # fmt: skip


def _namespaced(script: str, mounts: list[tuple[str, Path, str]], cwd: Path, env: dict[str, str]) -> str:
    """Run `script` (sh) in a user and mount namespace of our own with `mounts` made; return its stdout+stderr."""
    lines = ["set -e"]
    for kind, path, size in mounts:
        place = shlex.quote(str(path))
        if kind == "tmpfs":
            lines.append(f"mount -t tmpfs -o size={size} tmpfs {place}")
        else:  # a read-only bind of the place over itself: also binding for root
            lines += [f"mount --bind {place} {place}", f"mount -o remount,bind,ro {place}"]
    lines += [f"cd {shlex.quote(str(cwd))}", "set +e", script]  # entered again: a mount over it shows from now on
    done = subprocess.run(["unshare", "-Urm", "sh", "-c", "\n".join(lines)], cwd=cwd, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)  # fmt: skip
    return done.stdout


def _leftovers(tmp_path: Path) -> list[str]:
    """Return what patchwrite left in the test's TMPDIR, cache and paper directories (beside the test's own files)."""
    found = []
    for top in (tmp_path / "tmpdir", tmp_path / "paper"):
        for path in top.rglob("*") if top.is_dir() else []:
            if (
                path.name.endswith(".patchwrite-tmp")
                or path.name.endswith(".partial")
                or (path.parent.name.startswith("patchwrite-") and path.parent.parent == top)
            ):
                found.append(str(path.relative_to(tmp_path)))
    return sorted(found)


def _descendant_engine(parent: int, name: str = "pdflatex") -> int | None:
    """Return the pid of a running `name` process below `parent` (through bwrap and prlimit), else None."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                head, _, rest = handle.read().rpartition(b")")
        except OSError:
            continue
        if head.partition(b"(")[2] != name.encode():
            continue
        pid = int(entry)
        while pid > 1:
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    pid = int(handle.read().rpartition(b")")[2].split()[1])
            except OSError:
                break
            if pid == parent:
                return int(entry)
    return None


def _wait_for_engine(proc: subprocess.Popen[str], name: str = "pdflatex") -> int:
    while proc.poll() is None:
        pid = _descendant_engine(proc.pid, name)
        if pid is not None:
            return pid
        time.sleep(0.02)
    raise AssertionError(f"the run ended before {name} started: {proc.communicate()}")


def _capped(address_space: int, args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the command line under an address-space cap set from outside, as `ulimit -v` or a CI runner would."""
    argv = ["prlimit", f"--as={address_space}", sys.executable, "-m", "pytest_patchwrite.cli", *args]
    return subprocess.run(argv, cwd=cwd, env=env, text=True, capture_output=True, timeout=300)


def _start(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "pytest_patchwrite.cli", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- full and small filesystems --------------------------------------------------------------------------------
@pytest.mark.parametrize("size", ["4k", "16k"], ids=["copy-does-not-fit", "output-does-not-fit"])
def test_a_full_tmpdir_is_an_environment_error_never_a_cached_verdict(tmp_path: Path, size: str) -> None:
    root = _paper(tmp_path)
    if size == "4k":
        (root.parent / "notes.tex").write_text("% " + "notes " * 2000 + "\n")  # 12 KB more to copy
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    env = _env(tmp_path, TMPDIR=str(tiny))
    script = f'{PW} check main.tex; echo "rc=$?"; {PW} clean . >/dev/null; echo left:; ls -A {tiny}/patchwrite-*'
    out = _namespaced(script, [("tmpfs", tiny, size)], root.parent, env)
    assert "rc=2" in out, out
    assert "patchwrite: environment error:" in out and str(tiny) in out and "TMPDIR" in out, out
    # 4k: our own copy into the sandbox fails (ENOSPC); 16k: the copy fits, the engine's PDF does not (statvfs)
    assert ("the compile's sandbox failed: No space left on device" if size == "4k" else "pdflatex could not write "
            "its output: the filesystem is full") in out, out  # fmt: skip
    assert "Traceback" not in out and "FAILED" not in out, out
    assert out.split("left:")[1].strip() == "", out
    assert root.read_text() == PAPER
    # the same check with room: the right verdict, compiled (nothing of the failure was cached)
    again = _cli(["check", "main.tex"], root.parent, _env(tmp_path))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "main.tex::compile ok (pdflatex" in again.stdout and "cached" not in again.stdout


def test_a_full_paper_directory_at_commit_keeps_the_file(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    before = root.read_bytes()
    paper = tmp_path / "small"
    paper.mkdir()
    script = (
        f"cp {root.parent}/* . && dd if=/dev/zero of=filler bs=4k 2>/dev/null; {PW} apply main.tex edit.txt; "
        'echo "rc=$?"; '
        f'cat main.tex; echo "files: $(ls -A | tr "\\n" " ")"; rm filler; {PW} apply main.tex edit.txt; '
        'echo "rc2=$?"; cat main.tex'
    )
    out = _namespaced(script, [("tmpfs", paper, "64k")], paper, _env(tmp_path))
    first, _, second = out.partition("rc2=")
    assert "rc=2" in first and "patchwrite: environment error:" in first, out
    assert "No space left on device" in first and "free space on that filesystem" in first, out
    assert before.decode() in first and "Hello edited world." not in first, out  # the bytes it had
    assert "patchwrite-tmp" not in first.split("files:")[1], out  # no temp copy left beside it
    assert second.startswith("0") and "Hello edited world." in second, out


def test_a_read_only_checkout_runs_pytest_without_the_cache(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    paper = root.parent
    (paper / "pytest.ini").write_text("[pytest]\n")
    script = f'{shlex.quote(sys.executable)} -m pytest -q -p no:randomly .; echo "rc=$?"'
    out = _namespaced(script, [("ro", paper, "")], paper, _env(tmp_path))
    assert "INTERNALERROR" not in out and "Traceback" not in out, out
    assert "rc=0" in out and "3 passed, 1 skipped" in out, out
    assert sorted(p.name for p in paper.iterdir()) == ["edit.txt", "main.tex", "pytest.ini"]  # nothing written
    writable = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "."], cwd=paper,
                              env=_env(tmp_path), text=True, capture_output=True, timeout=300)  # fmt: skip
    assert writable.returncode == 0 and "3 passed, 1 skipped" in writable.stdout, writable.stdout
    assert list((tmp_path / "cache" / "patchwrite").rglob("*.json"))  # the verdict cache, outside the checkout


def test_environment_errors_are_pytest_errors_not_failures(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    paper = root.parent
    (paper / "pytest.ini").write_text("[pytest]\n")
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    script = f'{shlex.quote(sys.executable)} -m pytest -q -p no:randomly -p no:cacheprovider .; echo "rc=$?"'
    out = _namespaced(script, [("tmpfs", tiny, "24k")], paper, _env(tmp_path, TMPDIR=str(tiny)))
    assert "INTERNALERROR" not in out and "rc=1" in out, out
    # every item that reads the compile's record errors; numbers without a declared log is skipped before any compile
    assert "3 errors" in out and "1 skipped" in out and "failed" not in out and "passed" not in out, out
    assert "patchwrite: environment error:" in out and "TMPDIR" in out, out


# -- a killed engine, an address-space cap, our own limits ----------------------------------------------------
@pytest.mark.parametrize("command", ["check", "apply"])
def test_an_engine_killed_from_outside_is_an_environment_error(tmp_path: Path, command: str) -> None:
    root = _paper(tmp_path, SLOW)
    before = root.read_bytes()
    env = _env(tmp_path)
    args = ["check", "main.tex"] if command == "check" else ["apply", "main.tex", "edit.txt", "--json"]
    proc = _start(args, root.parent, env)
    os.kill(_wait_for_engine(proc), signal.SIGKILL)  # as the OOM killer would
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, out + err
    assert "pdflatex was killed by SIGKILL" in err and "nothing was cached" in err, err
    assert root.read_bytes() == before
    if command == "apply":
        data = json.loads(out)
        assert data["accepted"] is False and data["stage"] == "compile" and data["reason"] == "engine_killed"
        assert data["error"]["reason"] == "engine_killed" and "memory" in data["error"]["remedy"]
    assert _cli(["clean", "."], root.parent, env).returncode == 0
    assert _leftovers(tmp_path) == []
    again = _cli(args, root.parent, env)
    assert again.returncode == 0, again.stdout + again.stderr
    if command == "check":
        assert "compile ok (pdflatex" in again.stdout and "cached" not in again.stdout
    else:
        assert json.loads(again.stdout)["accepted"] is True and "Hello edited world." in root.read_text()


def test_an_inherited_address_space_cap_is_an_environment_error(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    env = _env(tmp_path)
    capped = _capped(96 << 20, ["check", "main.tex"], root.parent, env)
    assert capped.returncode == 2, capped.stdout + capped.stderr
    assert "address-space (ulimit -v, prlimit --as) limit this process inherited (96 MB)" in capped.stderr
    again = _cli(["check", "main.tex"], root.parent, env)
    assert again.returncode == 0 and "cached" not in again.stdout, again.stdout + again.stderr


def test_our_memory_limit_is_a_verdict_naming_its_variable(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    limited = _cli(["check", "main.tex"], root.parent, _env(tmp_path, PATCHWRITE_SANDBOX_MEMORY_MB="96"))
    assert limited.returncode == 1, limited.stdout + limited.stderr
    assert "sandbox_limit memory" in limited.stdout and "PATCHWRITE_SANDBOX_MEMORY_MB raises it" in limited.stdout
    assert _cli(["check", "main.tex"], root.parent, _env(tmp_path)).returncode == 0


def test_the_disk_limit_names_itself_not_a_timeout(tmp_path: Path) -> None:
    line = "x" * 1000
    body = (
        "\\newwrite\\big\\immediate\\openout\\big=big.txt\\newcount\\pwn\n"
        f"\\loop\\advance\\pwn by 1 \\immediate\\write\\big{{{line}}}\\ifnum\\pwn<4000 \\repeat\n"
        "\\immediate\\closeout\\big\nHello world.\n"
    )
    root = _paper(tmp_path, PAPER.replace("Hello world.\n", body))
    limited = _cli(["check", "main.tex"], root.parent, _env(tmp_path, PATCHWRITE_SANDBOX_DISK_MB="1"))
    assert limited.returncode == 1, limited.stdout + limited.stderr
    assert "sandbox_limit disk" in limited.stdout and "PATCHWRITE_SANDBOX_DISK_MB raises it" in limited.stdout
    assert "did not finish within" not in limited.stdout and "endless macro loop" not in limited.stdout
    roomy = _cli(["check", "main.tex"], root.parent, _env(tmp_path, PATCHWRITE_SANDBOX_DISK_MB="64"))
    assert roomy.returncode == 0, roomy.stdout + roomy.stderr


def test_a_sandbox_that_cannot_start_is_told_apart_from_a_failing_tool(tmp_path: Path) -> None:
    if not sandboxcmd.available():
        pytest.skip(sandboxcmd.unavailable_reason())
    paper = _paper(tmp_path).parent
    deadline = time.monotonic() + 120
    missing = sandboxcmd.FontDirs(tmp_path / "no-such-dir")  # bwrap's own bind of it fails before pdflatex runs
    outcome = sandbox.run("pdflatex", ["-interaction=nonstopmode"], ["main.tex"], paper, deadline=deadline,
                          fonts=missing)  # fmt: skip
    assert outcome.returncode == 1 and "Can't find source path" in outcome.not_started
    with pytest.raises(EnvironmentFault) as raised:
        outcomes.judge("pdflatex", outcome, Limits(), paper, paper / "main.log", None)
    assert raised.value.reason == "sandbox_failed" and "could not start" in str(raised.value)
    # a tool that ran and failed on its own is no such thing, whatever it printed
    (paper / "main.tex").write_text(PAPER.replace("Hello", "\\typeout{bwrap: No space left on device}\\undefined"))
    failed = sandbox.run("pdflatex", ["-interaction=nonstopmode"], ["main.tex"], paper, deadline=deadline)
    assert failed.returncode == 1 and failed.not_started == "" and failed.signal == 0
    assert outcomes.judge("pdflatex", failed, Limits(), paper, paper / "main.log", None) == ""


def test_a_printed_disk_full_message_proves_nothing(tmp_path: Path) -> None:
    root = _paper(tmp_path, PAPER.replace("Hello", "\\typeout{No space left on device}\\undefinedcs"))
    done = _cli(["check", "main.tex"], root.parent, _env(tmp_path))
    assert done.returncode == 1 and "undefined_control_sequence" in done.stdout, done.stdout + done.stderr
    assert "environment error" not in done.stderr


def test_a_job_directory_removed_during_the_compile(tmp_path: Path) -> None:
    root = _paper(tmp_path, SLOW)
    env = _env(tmp_path)
    proc = _start(["check", "main.tex"], root.parent, env)
    _wait_for_engine(proc)
    [job] = [p for p in (tmp_path / "tmpdir").glob("patchwrite-*/sandbox-*")]
    for _ in range(50):  # the engine may still create a file while it is removed
        shutil.rmtree(job, ignore_errors=True)
        if not job.exists():
            break
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, out + err
    assert "job directory disappeared" in err and "TMPDIR" in err, err
    again = _cli(["check", "main.tex"], root.parent, env)
    assert again.returncode == 0 and "cached" not in again.stdout, again.stdout + again.stderr


# -- another writer during apply -----------------------------------------------------------------------------
def _save(kind: str, path: Path) -> bytes:
    text = path.read_text().replace("Hello world.", "Hello world (saved).")
    if kind == "sed -i":
        subprocess.run(["sed", "-i", "s/Hello world\\./Hello world (saved)./", str(path)], check=True)
    elif kind == "rename-save":
        temp = path.with_name(f".{path.name}.swp")
        temp.write_text(text)
        os.replace(temp, path)
    elif kind == "in-place-same-size":  # same size, mtime restored: only the bytes (and ctime) tell
        info = path.stat()
        data = path.read_bytes().replace(b"Hello world.", b"Hello WORLD.")
        with open(path, "r+b") as handle:
            handle.write(data)
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    elif kind == "removed":
        path.unlink()
        return b""
    return path.read_bytes()


@pytest.mark.parametrize("kind", ["sed -i", "rename-save", "in-place-same-size", "removed"])
def test_a_save_during_apply_is_never_lost(tmp_path: Path, kind: str) -> None:
    root = _paper(tmp_path, SLOW)
    env = _env(tmp_path)
    proc = _start(["apply", "main.tex", "edit.txt", "--json"], root.parent, env)
    _wait_for_engine(proc)
    saved = _save(kind, root)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, out + err
    data = json.loads(out)
    assert data["accepted"] is False and data["reason"] == "changed_during_check"
    assert data["error"]["reason"] == "changed_during_check" and str(root) in data["error"]["cause"]
    assert "nothing was written" in err
    if kind == "removed":
        assert not root.exists()
        return
    assert root.read_bytes() == saved  # the other writer's bytes
    assert _cli(["clean", "."], root.parent, env).returncode == 0 and _leftovers(tmp_path) == []
    again = _cli(["apply", "main.tex", "edit.txt", "--json"], root.parent, env)
    assert again.returncode == 0 and json.loads(again.stdout)["accepted"] is True, again.stdout + again.stderr


def test_a_section_saved_during_apply_refuses_the_commit(tmp_path: Path) -> None:
    root = _paper(tmp_path, SLOW.replace("Hello world.\n", "Hello world.\n\\input{sec}\n"))
    section = root.parent / "sec.tex"
    section.write_text("A section.\n")
    (root.parent / "edit.txt").write_text(EDIT)
    before = root.read_bytes()
    proc = _start(["apply", "main.tex", "edit.txt"], root.parent, _env(tmp_path))
    _wait_for_engine(proc)
    subprocess.run(["sed", "-i", "s/A section/A saved section/", str(section)], check=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, out + err
    assert "sec.tex, which the verdict read, " in err and "nothing was written" in err
    assert root.read_bytes() == before and section.read_text() == "A saved section.\n"


# -- caches: content, not metadata; corrupted files of every shape ----------------------------------------------
def test_a_same_size_same_mtime_rewrite_is_seen_in_a_long_lived_process(tmp_path: Path) -> None:
    log = tmp_path / "results.json"
    log.write_text('{"accuracy": 0.914}\n')
    assert "0.914" in load_logs([log], tmp_path).raw
    info = log.stat()
    with open(log, "r+b") as handle:  # rewritten in place: same inode, same size, the mtime put back
        handle.write(b'{"accuracy": 0.915}\n')
    os.utime(log, ns=(info.st_atime_ns, info.st_mtime_ns))
    after = log.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (info.st_ino, info.st_size, info.st_mtime_ns)
    raw = load_logs([log], tmp_path).raw
    assert "0.915" in raw and "0.914" not in raw


SHAPES = {
    "nested-brackets": b"[" * 100_000,
    "truncated": b'{"ok": true, "engine": "pdf',
    "binary": b"\xff\xfe\x00garbage\x00",
    "empty": b"",
    "a-list": b"[1, 2, 3]",
    "wrong-types": b'{"ok": "yes", "messages": 7, "violations": null, "base": 1}',
    "a-directory": b"",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_corrupted_cache_file_is_ignored(tmp_path: Path, shape: str) -> None:
    root = _paper(tmp_path)
    env = _env(tmp_path)
    first = _cli(["check", "main.tex"], root.parent, env)
    assert first.returncode == 0, first.stdout + first.stderr
    entries = sorted((tmp_path / "cache" / "patchwrite").rglob("*.json"))
    assert entries, "the check wrote no cache entry"
    for entry in entries:
        if shape == "a-directory":
            entry.unlink()
            entry.mkdir()
        else:
            entry.write_bytes(SHAPES[shape])
    for _ in range(2):  # and on every later run
        again = _cli(["check", "main.tex"], root.parent, env)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "compile ok (pdflatex" in again.stdout and "Traceback" not in again.stderr
    broken = _paper(tmp_path, PAPER.replace("Hello", "\\undefinedcs"), "broken")
    assert _cli(["check", "main.tex"], broken.parent, env).returncode == 1


def test_a_read_only_cache_directory_degrades(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    script = f'{PW} check main.tex; echo "rc=$?"'
    out = _namespaced(script, [("ro", cache, "")], root.parent, _env(tmp_path))
    assert "rc=0" in out and "compile ok (pdflatex" in out and "Traceback" not in out, out
    assert "cannot be made or read (Read-only file system); the verdict cache on disk is off" in out, out
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_a_cache_directory_that_stops_being_writable_is_one_warning(tmp_path: Path, fault: str) -> None:
    """tester2 W3: the secret exists, then the cache directory is remounted read-only or fills up: each run says
    so once and runs uncached, with the verdict a cold check gives (it used to say nothing)."""
    root = _paper(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    if fault == "read-only":
        assert _cli(["check", "main.tex"], root.parent, _env(tmp_path)).returncode == 0  # the secret, an entry
        mounts, fill = [("ro", cache, "")], ""
    else:
        mounts, fill = [("tmpfs", cache, "256k")], f"{PW} check main.tex; dd if=/dev/zero of={cache}/filler bs=4k; "
    script = (
        f"{fill}echo start:; sed -i s/Hello/Hallo/ main.tex; {PW} check main.tex; echo rc=$?; "
        f"sed -i 's/Hallo/Hallo \\\\undefinedmacro/' main.tex; {PW} check main.tex; echo rc=$?"
    )
    out = _namespaced(script, mounts, root.parent, _env(tmp_path)).partition("start:")[2]
    problem = "Read-only file system" if fault == "read-only" else "No space left on device"
    warning = f"patchwrite: warning: {cache}/patchwrite/compile cannot be written ({problem}); nothing new is cached"
    passed, _, failed = out.partition("rc=0")
    assert "compile ok (pdflatex" in passed and passed.count(warning) == 1 and "Traceback" not in out, out
    assert "undefined_control_sequence" in failed and "rc=1" in failed and failed.count(warning) == 1, out


def test_a_cache_directory_full_at_its_first_use_works_once_there_is_room(tmp_path: Path) -> None:
    """The secret is made whole or not at all: a full disk used to leave it empty, and every later run, with room,
    warned 'holds no usable secret' and ran without the cache until someone deleted the file by hand."""
    root = _paper(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    script = (
        f'dd if=/dev/zero of={cache}/filler bs=4k 2>/dev/null; {PW} check main.tex; echo "rc=$?"; '
        f"ls -A {cache}/patchwrite; echo room:; rm {cache}/filler; {PW} check main.tex; {PW} check main.tex"
    )
    out = _namespaced(script, [("tmpfs", cache, "64k")], root.parent, _env(tmp_path))
    full, _, room = out.partition("room:")
    assert "rc=0" in full and "compile ok (pdflatex" in full and "Traceback" not in out, out
    assert "the verdict cache on disk is off" in full, out  # the first run says the cache is off, and why
    assert "secret" not in full.split("rc=0")[1], out  # and leaves no secret behind, nor a temporary one
    assert "patchwrite-tmp" not in full, out
    assert "no usable secret" not in room and "warning" not in room, out
    assert "compile ok (pdflatex, " in room and ", cached)" in room, out  # the cache works again


T1 = "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\begin{document}\nHello.\n\\end{document}\n"


@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_a_font_cache_that_cannot_be_written_falls_back_to_the_jobs_fonts(tmp_path: Path, fault: str) -> None:
    require_tool("mktexpk", "texlive-binaries")
    if subprocess.run(["kpsewhich", "sfrm1000.pfb"], capture_output=True, text=True).stdout.strip():
        pytest.skip("cm-super is installed: T1 text uses outline fonts, no bitmap font is made")
    root = _paper(tmp_path, T1)
    cache = tmp_path / "cache"
    cache.mkdir()
    mount = ("ro", cache, "") if fault == "read-only" else ("tmpfs", cache, "8k")
    script = f'{PW} check main.tex; echo "rc=$?"; echo "left:"; find {cache} -name "*.partial" -o -name "*-tmp"'
    out = _namespaced(script, [mount], root.parent, _env(tmp_path))
    assert "rc=0" in out and "compile ok (pdflatex" in out and "Traceback" not in out, out
    problem = "Read-only file system" if fault == "read-only" else "No space left on device"
    assert f"texmf-var cannot be written ({problem}); bitmap fonts are made again for every compile" in out, out
    assert out.split("left:")[1].strip() == "", out  # no half-copied font


def test_clean_sweeps_a_killed_font_builds_temp_name(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    env = _env(tmp_path)
    gone = subprocess.Popen(["true"])
    gone.wait()  # reaped: its pid names no process
    fonts = tmp_path / "cache" / "patchwrite" / "texmf-var" / "fonts" / "pk" / "ljfour" / "jknappen" / "ec"
    fonts.mkdir(parents=True)
    partial = fonts / f".ecrm1000.600pk.{gone.pid}.k3y4z5.patchwrite-tmp"
    partial.write_bytes(b"\xf7\x59half")
    done = _cli(["clean", "."], root.parent, env)
    assert done.returncode == 0 and f"removed {partial}" in done.stdout, done.stdout + done.stderr
    assert not partial.exists()


def test_a_big_log_that_does_not_fit_in_memory_is_named(tmp_path: Path) -> None:
    root = _paper(tmp_path, "% !patchwrite log = results.txt\n" + PAPER)
    log = root.parent / "results.txt"
    with open(log, "wb") as handle:
        for _ in range(64):
            handle.write(b"0.5 " * (1 << 18))  # 64 MB of numbers
    env = _env(tmp_path)
    capped = _capped(200 << 20, ["check", "main.tex"], root.parent, env)
    assert capped.returncode == 2, capped.stdout + capped.stderr
    assert "results.txt" in capped.stderr and "64.0 MB" in capped.stderr and "memory" in capped.stderr
    assert "internal error" not in capped.stderr
    log.write_text("0.5\n")
    assert _cli(["check", "main.tex"], root.parent, env).returncode == 0


# -- clean -----------------------------------------------------------------------------------------------------
def test_clean_treats_a_zombie_owner_as_gone_and_a_future_mtime_as_old(tmp_path: Path) -> None:
    root = _paper(tmp_path)
    env = _env(tmp_path)
    zombie = subprocess.Popen(["true"])
    try:
        for _ in range(500):
            with open(f"/proc/{zombie.pid}/stat", "rb") as handle:
                if handle.read().rpartition(b")")[2].split()[0] == b"Z":
                    break
            time.sleep(0.01)
        owned = tmp_path / "tmpdir" / f"patchwrite-{os.getuid()}"
        owned.mkdir(mode=0o700)
        (owned / f"sandbox-{zombie.pid}-abc123").mkdir()
        beside = root.parent / f".main.tex.{zombie.pid}.x1y2z3.patchwrite-tmp"
        beside.write_text("partial")
        future = root.parent / ".main.tex.abcdefgh.patchwrite-tmp"  # an older version's name: no pid, only an age
        future.write_text("partial")
        os.utime(future, (time.time() + 86400, time.time() + 86400))
        done = _cli(["clean", "."], root.parent, env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "3 stale temp file(s) or sandbox(es) removed" in done.stdout, done.stdout
        assert not beside.exists() and not future.exists() and list(owned.iterdir()) == []
    finally:
        zombie.wait()


def test_retry_once_runs_again_once_then_lets_the_fault_through() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 2:
            raise envfaults.vanished("/tmp/x")
        return "ok"

    assert envfaults.retry_once(flaky) == "ok" and len(calls) == 2

    def broken() -> str:
        calls.append(1)
        raise envfaults.vanished("/tmp/x")

    calls.clear()
    with pytest.raises(EnvironmentFault):
        envfaults.retry_once(broken)
    assert len(calls) == 2


def test_a_broken_pipe_inside_the_engine_is_the_manuscripts_outcome(tmp_path: Path) -> None:
    # xelatex gets SIGPIPE when xdvipdfmx, reading its output, stops on a figure it cannot convert: latexmk
    # fails such a paper too, so it is a verdict (engine_exit), not an environment error; a SIGKILL stays one
    limits = Limits()
    pipe = sandbox.Outcome(returncode=-signal.SIGPIPE, signal=signal.SIGPIPE)
    assert outcomes.judge("xelatex", pipe, limits, tmp_path, None, envfaults.oom_kills()) == ""
    killed = sandbox.Outcome(returncode=-signal.SIGKILL, signal=signal.SIGKILL)
    with pytest.raises(EnvironmentFault):
        outcomes.judge("xelatex", killed, limits, tmp_path, None, envfaults.oom_kills())


def test_an_engine_killed_in_the_detection_pass_is_retried_like_a_table_job(tmp_path: Path) -> None:
    # tester2 W1: `stress --detection` stopped the whole run on one killed engine in the detection pass, where a
    # killed engine in a table job is retried once (docs/environment.md: stress retries such a job once)
    require_tool("pdflatex")
    options = asdict(StressOptions(faults=("swapped_acc",), cache_dir=str(tmp_path / "cache"), detection=True))
    killed: list[int] = []

    def kill_the_first_engine() -> None:
        deadline = time.monotonic() + 120
        while not killed and time.monotonic() < deadline:
            pid = _descendant_engine(os.getpid())
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.01)

    killer = threading.Thread(target=kill_the_first_engine, daemon=True)
    killer.start()
    try:
        cells = detection_job("en_vision_01", options)
    finally:
        killed.append(0)  # stops the killer when no engine ever started
        killer.join()
    assert killed[0] != 0, "no engine was killed"
    # the paper's named limit, as an unkilled run gives it: the pool rule misses swapped_acc, bindings catch it
    assert cells["swapped_acc"] == (False, True) and cells["fake_cite"][0] is True
