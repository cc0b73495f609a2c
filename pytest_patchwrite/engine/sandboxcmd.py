"""The command that starts a tool for a manuscript: the bubblewrap command line (what the sandbox binds, the
TeX environment it sets), the unconfined one for a trusted run, and whether bubblewrap works here.

`sandbox.run` starts what `command` returns; nothing here starts a manuscript's process (the probe runs
`/bin/true`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from .sandboxlimits import Limits, with_limits

# where the private copy appears inside the sandbox; a fixed path, so logs read the same everywhere
TREE = "/patchwrite/tree"
_HOME = "/tmp/home"
HOME = _HOME  # the sandbox's home: its font directories (TEXMFVAR, TEXMFHOME) live below it
# read-only parts of the host a TeX run needs (only those present are bound)
_RO_PATHS = ("/usr", "/var/lib/texmf", "/var/cache/fontconfig", "/etc/texmf", "/etc/fonts", "/etc/ld.so.cache",
             "/etc/alternatives", "/etc/perl", "/etc/localtime", "/etc/papersize", "/etc/libpaper.d")  # fmt: skip
_LINKS = {"/bin": "usr/bin", "/lib": "usr/lib", "/lib64": "usr/lib64", "/sbin": "usr/sbin"}


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
    # (file, path): a cut font map bound read-only over the map at `path` (gates.fontmap; warm runs only)
    map_over: tuple[Path, str] | None = None


def read_only_host_path(path: str) -> bool:
    """Return whether `path` is a file of the host that every sandbox sees read-only at the same path."""
    real = os.path.realpath(path)
    return os.path.isfile(real) and any(real.startswith(p + "/") for p in _RO_PATHS if os.path.exists(p))


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
        if fonts.map_over is not None and read_only_host_path(fonts.map_over[1]):
            args += ["--ro-bind", str(fonts.map_over[0]), os.path.realpath(fonts.map_over[1])]
    if tree is not None:
        args += ["--bind", str(tree), TREE, "--chdir", cwd]
    return args


def check_argument(arg: str) -> str:
    """Return `arg` unchanged when a tool cannot take it for an option; raise ValueError otherwise."""
    if not arg or arg[0] in "-&\\" or any(c in arg for c in "\0\n\r"):
        raise ValueError(f"refusing to pass {arg!r} to a tool: it could be read as an option")
    return arg


def command(
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
    path, binds = engine_path(path)
    argv += binds
    bin_dir = str(Path(path).parent)
    if bin_dir not in env["PATH"].split(":"):  # the engine starts xdvipdfmx etc. from its own directory
        env["PATH"] = f"{bin_dir}:{env['PATH']}"
    cmd[0] = path
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return with_limits([*argv, "--", *cmd], limits), {"PATH": "/usr/bin:/bin"}, "/"


def engine_path(found: str) -> tuple[str, list[str]]:
    """Return the path a tool found on PATH is started by inside the sandbox, and the binds that make it visible.

    A tool is often a symlink (`/usr/local/bin/pdflatex -> /opt/texlive/2025/bin/x86_64-linux/pdflatex`, a
    directory of links put first on PATH) and the engine tells its format by the name it is started by
    (`pdflatex -> pdftex`), so it is started by the link nearest the binary that still bears its name (its
    directory resolved): under the bound system paths as it is, in a TeX Live tree with that tree bound read-only,
    else with the binary it resolves to bound read-only at that path.
    """
    name, current = os.path.basename(found), found
    chain: list[str] = []
    while len(chain) < 32:
        current = os.path.join(os.path.realpath(os.path.dirname(current)), os.path.basename(current))
        if os.path.basename(current) == name:
            chain.append(current)
        if not os.path.islink(current):
            break
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    for link in reversed(chain):
        if any(link.startswith(p + "/") for p in ("/usr", "/bin", "/sbin")):
            return link, []
        root = _tex_live_root(link)
        if root is not None:  # a TeX Live outside /usr (/opt/texlive, ~/texlive): visible read-only
            return link, ["--ro-bind", str(root), str(root)]
    return chain[-1], ["--ro-bind", os.path.realpath(found), chain[-1]]


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


_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def safe_file_name(name: str) -> bool:
    """Return whether a file name is harmless on a command line and in a shell (no `$`, quotes, spaces, `-x`)."""
    return bool(_SAFE_NAME.fullmatch(name)) and ".." not in name
