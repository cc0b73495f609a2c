"""How one sandboxed tool run ended: on its own, stopped by one of our sandbox limits (a verdict that names the
limit), or by the machine (an `EnvironmentFault`, never a verdict and never cached).

The order matters: what we did ourselves (the deadline, the disk watcher) is known first; then what the
kernel and bubblewrap report (a signal we did not send, a sandbox that never ran the tool, an errno);
the tool's own words (its log, its stderr) only ever add to evidence from the system, never replace it.
"""

from __future__ import annotations

import resource
import shutil
import signal
import threading
from pathlib import Path

from ..engine import sandbox, sandboxcmd
from ..engine.sandboxlimits import Limits
from ..engine.texlog import memory_exhausted, write_failed
from ..errors import EnvironmentFault
from ..files import envfaults
from .report import PACKAGE_OF, EngineMissing

#: our sandbox limits: (what it bounds, the environment variable that raises it, its unit)
LIMITS = {
    "disk": ("everything the job may write", "PATCHWRITE_SANDBOX_DISK_MB"),
    "file": ("the largest file a tool may write", "PATCHWRITE_SANDBOX_FILE_MB"),
    "memory": ("the address space of each process", "PATCHWRITE_SANDBOX_MEMORY_MB"),
    "cpu": ("the CPU time of each process", "PATCHWRITE_SANDBOX_CPU_SECONDS"),
    "processes": ("the processes of the job", "PATCHWRITE_SANDBOX_PROCESSES"),
}
_RESOURCE = {"memory": resource.RLIMIT_AS, "file": resource.RLIMIT_FSIZE, "cpu": resource.RLIMIT_CPU}
_ATTRIBUTE = {"memory": "memory_bytes", "file": "file_bytes", "cpu": "cpu_seconds", "disk": "disk_bytes",
              "processes": "processes"}  # fmt: skip


def ours(limit: str, limits: Limits) -> bool:
    """Return whether `limit` was ours: the sandbox's value, not a lower one this process inherited."""
    which = _RESOURCE.get(limit)
    if which is None:
        return True
    hard = resource.getrlimit(which)[1]
    return hard == resource.RLIM_INFINITY or int(getattr(limits, _ATTRIBUTE[limit])) <= hard


def _inherited(limit: str, tool: str, place: Path) -> EnvironmentFault:
    hard = resource.getrlimit(_RESOURCE[limit])[1]
    shown = f"{hard >> 20} MB" if limit != "cpu" else f"{hard} s"
    what = {"memory": "address-space (ulimit -v, prlimit --as)", "file": "file-size (ulimit -f)",
            "cpu": "CPU-time (ulimit -t)"}[limit]  # fmt: skip
    cause = f"{tool} hit the {what} limit this process inherited ({shown}), below the sandbox's own"
    return EnvironmentFault(
        place,
        cause,
        f"raise that limit where patchwrite is started; {LIMITS[limit][1]} sets the sandbox's",
        reason="out_of_memory" if limit == "memory" else "limit_inherited",
    )


def judge(
    tool: str, outcome: sandbox.Outcome, limits: Limits, tree: Path, log: Path | None, oom_before: int | None
) -> str:
    """Return "" when `tool` ended on its own, else the sandbox limit that stopped it ("timeout", "disk", "cpu",
    "file", "memory"); raise EnvironmentFault when the machine stopped it. `log`: the file the tool writes."""
    if not tree.is_dir():
        raise envfaults.vanished(tree)
    if outcome.timed_out:
        return "timeout"
    if outcome.over_limit:
        return outcome.over_limit
    if outcome.not_started:
        raise envfaults.sandbox_failed(tool, outcome.not_started)
    if outcome.signal in (signal.SIGXCPU, signal.SIGXFSZ):
        limit = "cpu" if outcome.signal == signal.SIGXCPU else "file"
        if ours(limit, limits):
            return limit
        raise _inherited(limit, tool, tree)
    if outcome.signal:
        oom_after = envfaults.oom_kills()
        oom = oom_before is not None and oom_after is not None and oom_after > oom_before
        if outcome.signal == signal.SIGPIPE and not oom:
            # the engine's own pipe partner stopped (xdvipdfmx, reading xelatex's output, on a figure it
            # cannot convert): the manuscript's outcome, as latexmk reports it, not the machine's
            return ""
        raise envfaults.engine_killed(tool, outcome.signal, tree, oom)
    if not outcome.returncode:
        return ""
    if memory_exhausted(outcome.stderr):
        if ours("memory", limits):
            return "memory"
        raise _inherited("memory", tool, tree)
    if log is not None and envfaults.is_full(log.parent):
        # the filesystem is full now, and the tool's own record is missing or says a write failed
        text = _read(log)
        if not text or write_failed(text) or write_failed(outcome.stderr):
            raise envfaults.disk_full(log.parent, f"{tool} could not write its output")
    return ""


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(4 << 20).decode("utf-8", "replace")
    except OSError:
        return ""


def limit_message(limit: str, limits: Limits, seconds: float) -> str:
    """Return the violation text of a run one of our sandbox limits stopped: the limit, its value, its variable."""
    what, variable = LIMITS[limit]
    value = int(getattr(limits, _ATTRIBUTE[limit]))
    shown = f"{value} s" if limit == "cpu" else f"{value}" if limit == "processes" else f"{value >> 20} MB"
    return (
        f"the sandbox's {limit} limit ({what}: {shown}) stopped the compile after {seconds:.1f} s; {variable} raises it"
    )


def run_tool(
    tool: str, options: list[str], operands: list[str], work: Path, deadline: float, log: Path | None,
    fonts: sandboxcmd.FontDirs | None, limits: Limits, confined: bool, cancel: threading.Event | None = None,
) -> tuple[sandbox.Outcome, str]:  # fmt: skip
    """Run one tool in the sandbox on the job directory holding `work`; return how it ended and what stopped it
    ("" when it ended itself, "cancel" when `cancel` was set; see `judge`, which raises EnvironmentFault when the
    machine stopped it)."""
    if shutil.which(tool) is None:
        raise EngineMissing(f"{tool} is not installed (Debian package {PACKAGE_OF.get(tool, tool)})")
    tree = sandbox.owning_job_directory(work) or work
    # confined, kpathsea opens `../` and absolute names (the sandbox holds nothing else to open; sandbox.py)
    oom_before = envfaults.oom_kills()
    outcome = sandbox.run(tool, options, operands, tree, cwd=work, deadline=deadline, limits=limits,
                          confined=confined, fonts=fonts, cancel=cancel)  # fmt: skip
    if outcome.over_limit == "cancel":
        return outcome, "cancel"
    return outcome, judge(tool, outcome, limits, tree, log, oom_before)
