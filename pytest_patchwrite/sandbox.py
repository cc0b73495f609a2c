"""The one place that starts a process for a manuscript: TeX engines and tools inside a bubblewrap sandbox.

A manuscript comes from a stranger. Inside the sandbox only the TeX installation
(read-only) and the private copy of the manuscript (the only writable place) are
visible; there is no network, no environment but what TeX needs, a fresh PID
namespace that dies with the job, and resource limits. kpathsea's paranoid
settings stay on as a second layer. Where no sandbox can be made, the caller is
told once and refuses what the paranoid layer alone cannot hold, unless the run
is marked trusted.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .sandboxlimits import Limits, preexec, with_limits
from .tempfiles import make_owned_temp_dir, remove_tree

# where the private copy appears inside the sandbox; a fixed path, so logs read the same everywhere
TREE = "/patchwrite/tree"
_HOME = "/tmp/home"
# read-only parts of the host a TeX run needs (only those present are bound)
_RO_PATHS = ("/usr", "/var/lib/texmf", "/var/cache/fontconfig", "/etc/texmf", "/etc/fonts", "/etc/ld.so.cache",
             "/etc/alternatives", "/etc/perl", "/etc/localtime", "/etc/papersize", "/etc/libpaper.d")  # fmt: skip
_LINKS = {"/bin": "usr/bin", "/lib": "usr/lib", "/lib64": "usr/lib64", "/sbin": "usr/sbin"}


@dataclass(frozen=True)
class Outcome:
    """How one sandboxed process ended."""

    returncode: int | None
    timed_out: bool = False
    over_limit: str = ""  # which limit stopped it ("disk"), or ""
    signal: int = 0  # the signal that ended the tool when we did not send it (its wait status), else 0
    not_started: str = ""  # bwrap's own words when the sandbox never ran the tool (no exit status reported)
    stderr: str = ""  # the start of what the tool (and bwrap) wrote to stderr, at most 16 KiB


class SandboxError(RuntimeError):
    """The sandbox could not be started; the message says why."""


_probe_lock = threading.Lock()
_probe_result: str | None = None  # "" when bwrap works, else the reason it does not


def _bwrap() -> str | None:
    return shutil.which("bwrap")


def unavailable_reason() -> str:
    """Return why no OS sandbox can be made here, or "" when bubblewrap works."""
    global _probe_result
    with _probe_lock:
        if _probe_result is None:
            _probe_result = _probe()
        return _probe_result


def _probe() -> str:
    if os.environ.get("PATCHWRITE_NO_SANDBOX"):
        return "PATCHWRITE_NO_SANDBOX is set"
    if sys.platform != "linux":
        return f"bubblewrap needs Linux (this is {sys.platform})"
    bwrap = _bwrap()
    if bwrap is None:
        return "bubblewrap (`bwrap`, Debian package bubblewrap) is not installed"
    try:
        done = subprocess.run(
            [*_bwrap_args(bwrap, None, Limits()), "--", "/bin/true"],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot be run ({exc})"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot create a namespace here ({detail[-1] if detail else 'exit ' + str(done.returncode)})"
    return ""


def available() -> bool:
    """Return whether manuscripts can run inside a bubblewrap sandbox here."""
    return unavailable_reason() == ""


def tex_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Return the whole environment a TeX tool gets: nothing inherited, paranoid file access, no shell escape."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": _HOME,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TEXMFVAR": f"{_HOME}/texmf-var",
        "TEXMFCONFIG": f"{_HOME}/texmf-config",
        "TEXMFHOME": f"{_HOME}/texmf",
        "openin_any": "p",
        "openout_any": "p",
        "shell_escape": "f",
        "max_print_line": "10000",
        "error_line": "254",
        "half_error_line": "238",
        "SOURCE_DATE_EPOCH": "0",
    }
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class FontDirs:
    """Where a job's generated fonts go and where earlier ones are read, bound over the sandbox's TeX home."""

    var: Path  # writable, the job's own: TEXMFVAR, where mktexpk and mktextfm write
    cache: Path | None = None  # read-only, fonts built by `fontcache` from TeX Live's sources alone: TEXMFHOME


def _bwrap_args(
    bwrap: str, tree: Path | None, limits: Limits, cwd: str = TREE, fonts: FontDirs | None = None
) -> list[str]:
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL"]
    for path in _RO_PATHS:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    for link, target in _LINKS.items():
        if os.path.islink(link):
            args += ["--symlink", target, link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    # no /proc: with `openin_any=r` (so system probes such as `\IfFileExists{/dev/null}` answer as under
    # latexmk) it would hand a manuscript the host's mounts and kernel command line; no TeX tool needs it
    args += ["--dev", "/dev", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    args += ["--dir", _HOME]
    if fonts is not None:
        args += ["--bind", str(fonts.var), f"{_HOME}/texmf-var"]
        if fonts.cache is not None and fonts.cache.is_dir():
            args += ["--ro-bind", str(fonts.cache), f"{_HOME}/texmf"]
    if tree is not None:
        args += ["--bind", str(tree), TREE, "--chdir", cwd]
    return args


def check_argument(arg: str) -> str:
    """Return `arg` unchanged when a tool cannot take it for an option; raise ValueError otherwise."""
    if not arg or arg[0] in "-&\\" or any(c in arg for c in "\0\n\r"):
        raise ValueError(f"refusing to pass {arg!r} to a tool: it could be read as an option")
    return arg


def tree_bytes(root: Path, stop_above: int | None = None) -> int:
    """Return the bytes of the regular files below `root` (stopping once past `stop_above`)."""
    total = 0
    stack = [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
            if stop_above is not None and total > stop_above:
                return total
    return total


# -- live jobs, so a signal can end them and remove their directories ---------------------
_live_lock = threading.Lock()
_live_procs: set[subprocess.Popen[bytes]] = set()
_live_dirs: set[str] = set()
_handled: dict[int, object] = {}


_INNER: dict[int, int] = {}  # bwrap's pid -> the pid of the sandbox's init (its PID namespace)


def _read_child_pid(fd: int) -> int:
    """Return the sandbox init's pid that bwrap reports on its info fd (0 when it reports none)."""
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(4096)
    match = re.search(rb'"child-pid"\s*:\s*(\d+)', data)
    return int(match.group(1)) if match else 0


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # the sandbox's init first: the kernel then kills its whole PID namespace, and bwrap, seeing its child
    # gone, exits only after every process in it has been reaped, so nothing outlives the wait
    inner = _INNER.get(proc.pid, 0)
    if inner:
        try:
            os.kill(inner, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(procs: list[subprocess.Popen[bytes]], seconds: float = 5.0) -> None:
    """Wait (at most `seconds`) until the killed sandboxes' bwrap processes have exited.

    Not with `Popen.wait`: the signal usually interrupts the main thread inside
    `proc.wait()`, which holds the Popen's wait lock, so a second wait from the
    handler could never take it and always ran into its timeout.
    """
    pending = {proc.pid for proc in procs if proc.returncode is None}
    end = time.monotonic() + seconds
    while pending:
        for pid in list(pending):
            try:
                reaped, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # already reaped (Popen then reports exit status 0)
                reaped = pid
            if reaped:
                pending.discard(pid)
        if not pending or time.monotonic() >= end:
            return
        time.sleep(0.01)


def _on_signal(signum: int, frame: object) -> None:
    with _live_lock:
        procs, dirs = list(_live_procs), list(_live_dirs)
    for proc in procs:
        _kill_group(proc)
    _reap(procs)
    for directory in dirs:
        remove_tree(directory)
    previous = _handled.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)  # Python's SIGINT handler raises KeyboardInterrupt: pytest's usual exit
        return
    # the usual exit code of a process killed by this signal
    signal.signal(signum, signal.SIG_DFL if previous in (None, signal.SIG_DFL) else previous)  # type: ignore[arg-type]
    os.kill(os.getpid(), signum)


def install_signal_handlers() -> None:
    """Make SIGTERM, SIGINT and SIGHUP kill every live sandbox and remove its directory before the usual exit."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        current = signal.getsignal(signum)
        if current is _on_signal or current == signal.SIG_IGN:
            continue
        _handled[signum] = current
        signal.signal(signum, _on_signal)


@contextmanager
def job_directory(kind: str = "sandbox") -> Iterator[Path]:
    """Yield a fresh private directory for one job; it is removed afterwards, or when a signal ends the run."""
    install_signal_handlers()
    path = str(make_owned_temp_dir(kind))
    with _live_lock:
        _live_dirs.add(path)
    try:
        yield Path(path)
    finally:
        with _live_lock:
            _live_dirs.discard(path)
        remove_tree(path)


def _command(
    tool: str,
    options: list[str],
    operands: list[str],
    tree: Path,
    cwd: Path,
    limits: Limits,
    confined: bool,
    extra_env: dict[str, str] | None,
    info_fd: int | None = None,
    fonts: FontDirs | None = None,
    status_fd: int | None = None,
) -> tuple[list[str], dict[str, str], str]:
    """Return (argv, environment, working directory) that start `tool` on `tree`, confined or not.

    `info_fd`: where bwrap reports the pid of the sandbox's init; `fonts`: see `FontDirs` (confined only);
    `status_fd`: where bwrap reports the tool's exit status, which it does only once the sandbox ran it.
    """
    cmd = [tool, *options, *(check_argument(arg) for arg in operands)]
    path = shutil.which(tool)
    if path is None:
        raise FileNotFoundError(tool)
    rel = cwd.resolve().relative_to(tree.resolve())
    if not confined:
        env = tex_env(extra_env)
        env["HOME"] = env["TMPDIR"] = str(tree)
        for key in ("TEXMFVAR", "TEXMFCONFIG", "TEXMFHOME"):
            env.pop(key)
        return with_limits([path, *cmd[1:]], limits), env, str(cwd)
    bwrap = _bwrap()
    if bwrap is None or not available():
        raise SandboxError(unavailable_reason() or "bubblewrap is not installed")
    inner = str(Path(TREE) / rel) if str(rel) != "." else TREE
    argv = _bwrap_args(bwrap, tree, limits, inner, fonts)
    if info_fd is not None:
        argv[1:1] = ["--info-fd", str(info_fd)]
    if status_fd is not None:
        argv[1:1] = ["--json-status-fd", str(status_fd)]
    # confined, an absolute name can only reach the TeX trees, the fonts, /dev and the copy, so kpathsea may
    # open it: `\IfFileExists{/dev/null}` (a CJK class's system probe) is true, `/System/...` false, as
    # under latexmk; dot-files stay refused. Unconfined runs keep the paranoid `p`.
    env = tex_env({"openin_any": "r", **(extra_env or {})})
    root = _tex_live_root(path)
    if root is not None:  # a TeX Live outside /usr (/opt/texlive, ~/texlive): visible read-only
        argv += ["--ro-bind", str(root), str(root)]
    bin_dir = str(Path(path).parent)
    if bin_dir not in env["PATH"].split(":"):  # the engine starts xdvipdfmx etc. from its own directory
        env["PATH"] = f"{bin_dir}:{env['PATH']}"
    cmd[0] = path
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return with_limits([*argv, "--", *cmd], limits), {"PATH": "/usr/bin:/bin"}, "/"


def _tex_live_root(tool_path: str) -> Path | None:
    """Return the TeX Live tree holding a tool found outside the bound system paths, else None.

    TeX Live's own layout is `<root>/bin/<platform>/<tool>`; kpathsea finds its trees relative to
    the binary, so the whole root is bound at its own path.
    """
    if any(tool_path.startswith(p + "/") for p in ("/usr", "/bin", "/sbin")):
        return None
    directory = Path(tool_path).parent
    root = directory.parent.parent
    # only a real TeX Live tree: never bind whatever directory a stray `pdflatex` sits in (a home directory)
    if directory.parent.name != "bin" or not (root / "texmf-dist").is_dir():
        return None
    return root


def output_of(
    tool: str, options: list[str], operands: list[str], tree: Path, *, confined: bool, seconds: float = 30.0
) -> str | None:
    """Return the standard output (at most 64 KiB) of a short query such as kpsewhich, or None when it failed."""
    limits = Limits()
    argv, env, run_cwd = _command(tool, options, operands, tree, tree, limits, confined, None)
    try:
        done = subprocess.run(
            argv, cwd=run_cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=seconds,
            start_new_session=True, preexec_fn=preexec(limits),
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout[: 64 * 1024].decode("utf-8", "replace")


def run(
    tool: str,
    options: list[str],
    operands: list[str],
    tree: Path,
    *,
    cwd: Path | None = None,
    deadline: float,
    limits: Limits | None = None,
    confined: bool = True,
    extra_env: dict[str, str] | None = None,
    fonts: FontDirs | None = None,
) -> Outcome:
    """Return how `tool options operands` ended, run in `cwd` (below `tree`), `tree` its only writable place.

    `options` are the caller's own fixed flags; `operands` come from the
    manuscript and are refused when a tool could read one as an option.

    Confined: inside bubblewrap, `tree` mounted at `TREE`. Not confined (a
    trusted run, or where the caller decided so): the same environment and
    limits, in the real directory. The whole process tree is killed at
    `deadline` (a `time.monotonic()` value) or when it writes more than
    `limits.disk_bytes` into `tree` (and the job's font directory, `fonts.var`).
    """
    limits = limits or Limits()
    install_signal_handlers()
    info_read, info_write = os.pipe() if confined else (-1, -1)
    status_read, status_write = os.pipe() if confined else (-1, -1)
    try:
        argv, env, run_cwd = _command(tool, options, operands, tree, cwd or tree, limits, confined, extra_env,
                                      info_write if confined else None, fonts,
                                      status_write if confined else None)  # fmt: skip
    except BaseException:
        if confined:
            for fd in (info_read, info_write, status_read, status_write):
                os.close(fd)
        raise
    try:
        proc = subprocess.Popen(
            argv, cwd=run_cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec(limits),
            pass_fds=(info_write, status_write) if confined else (),
        )  # fmt: skip
    except BaseException:
        if confined:
            os.close(info_read)
            os.close(status_read)
        raise
    finally:
        if confined:
            os.close(info_write)
            os.close(status_write)
    stderr = _Drain(proc.stderr)
    with _live_lock:
        _live_procs.add(proc)
    stopped = {"why": ""}

    def kill(why: str) -> None:
        stopped["why"] = stopped["why"] or why
        _kill_group(proc)

    # a blocking wait plus a timer: Popen.wait(timeout) polls with sleeps that add up to 20% here
    timer = threading.Timer(max(0.05, deadline - time.monotonic()), kill, args=("timeout",))
    timer.daemon = True
    timer.start()
    if confined:  # until bwrap reports it (right after it starts), a kill takes bwrap's process group
        _INNER[proc.pid] = _read_child_pid(info_read)
    done = threading.Event()
    writable = [tree, fonts.var] if confined and fonts is not None else [tree]

    def over_disk() -> bool:
        return sum(tree_bytes(place, limits.disk_bytes) for place in writable) > limits.disk_bytes

    def watch_disk() -> None:
        while not done.wait(0.2):
            if over_disk():
                kill("disk")
                return

    watcher = threading.Thread(target=watch_disk, daemon=True)
    watcher.start()
    try:
        proc.wait()
    finally:
        done.set()
        timer.cancel()
        if proc.returncode is None:
            _kill_group(proc)
            proc.wait()
        with _live_lock:
            _live_procs.discard(proc)
        _INNER.pop(proc.pid, None)
    if not stopped["why"] and over_disk():
        stopped["why"] = "disk"
    errors = stderr.text()
    status = _read_status(status_read) if confined else b""
    returncode = proc.returncode
    signum = 0 if stopped["why"] else _signal_of(returncode, confined)
    not_started = ""
    if confined and not stopped["why"] and not signum and b'"exit-code"' not in status:
        # bwrap reports an exit status only once the sandbox ran the tool: without one, bwrap itself failed
        said = [line for line in errors.splitlines() if line.startswith("bwrap: ")]
        not_started = said[-1].removeprefix("bwrap: ") if said else f"bwrap exited with status {returncode}"
    return Outcome(returncode, stopped["why"] == "timeout", "disk" if stopped["why"] == "disk" else "",
                   signum, not_started, errors)  # fmt: skip


def _signal_of(returncode: int | None, confined: bool) -> int:
    """Return the signal that ended a tool from its wait status (bwrap passes on 128 + N), else 0."""
    if returncode is None:
        return 0
    if returncode < 0:  # the process we waited for (bwrap, or the unconfined tool) itself
        return -returncode
    if confined and 128 < returncode < 128 + 65:
        return returncode - 128
    return 0


def _read_status(fd: int) -> bytes:
    """Return what bwrap wrote on its status fd (it has exited: the pipe holds all of it)."""
    os.set_blocking(fd, False)
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except BlockingIOError:
        pass  # a sandboxed process still holds the write end: what is there is all bwrap wrote
    finally:
        os.close(fd)
    return b"".join(chunks)


class _Drain:
    """Reads a child's stderr to its end in a thread, keeping the first 16 KiB (the rest is discarded)."""

    LIMIT = 16 * 1024

    def __init__(self, stream: IO[bytes] | None) -> None:
        self._kept = bytearray()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        with stream:
            while chunk := os.read(stream.fileno(), 65536):
                if len(self._kept) < self.LIMIT:
                    self._kept += chunk[: self.LIMIT - len(self._kept)]

    def text(self) -> str:
        """Return what was kept, once the stream ended (at most 5 s after the process did)."""
        self._thread.join(5.0)
        return bytes(self._kept).decode("utf-8", "replace")


_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def safe_file_name(name: str) -> bool:
    """Return whether a file name is harmless on a command line and in a shell (no `$`, quotes, spaces, `-x`)."""
    return bool(_SAFE_NAME.fullmatch(name)) and ".." not in name


def owning_job_directory(path: Path) -> Path | None:
    """Return the live job directory that holds `path` (the sandbox's only writable place), or None."""
    with _live_lock:
        dirs = set(_live_dirs)
    for candidate in (path, *path.parents):
        if str(candidate) in dirs:
            return candidate
    return None
