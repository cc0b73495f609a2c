"""The resource limits of a sandboxed process tree: their values (`PATCHWRITE_SANDBOX_*` overrides) and how they
are applied (util-linux `prlimit` in front of the command, else `setrlimit` in the forked child).

A limit reached is a verdict that names the limit and its variable (`gates.outcomes`), never an environment error.
"""

from __future__ import annotations

import resource
import shutil
from collections.abc import Callable
from dataclasses import dataclass

from ..files.inputs import positive_env

GiB = 1 << 30


MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed process tree; the defaults are far above what a real paper needs."""

    memory_bytes: int = 8 * GiB  # address space per process (LuaTeX reserves generously)
    file_bytes: int = 1 * GiB  # largest single file a tool may write
    disk_bytes: int = 2 * GiB  # everything the job may write into its copy
    tmp_bytes: int = 256 * MiB  # the private /tmp
    processes: int = 256
    cpu_seconds: int = 600
    open_files: int = 1024

    @classmethod
    def from_env(cls) -> Limits:
        """Return the limits with `PATCHWRITE_SANDBOX_<NAME>` overrides (`_MB` for sizes) from the environment."""
        values: dict[str, int] = {}
        for name, unit, suffix in (
            ("memory_bytes", MiB, "MEMORY_MB"),
            ("file_bytes", MiB, "FILE_MB"),
            ("disk_bytes", MiB, "DISK_MB"),
            ("tmp_bytes", MiB, "TMP_MB"),
            ("processes", 1, "PROCESSES"),
            ("cpu_seconds", 1, "CPU_SECONDS"),
        ):
            number = positive_env(f"PATCHWRITE_SANDBOX_{suffix}")
            if number is not None:
                values[name] = int(number * unit)
        return cls(**values)


CPU_GRACE = 5  # seconds between the CPU limit's SIGXCPU and its SIGKILL


_RLIMITS = (
    ("as", resource.RLIMIT_AS, "memory_bytes"),
    ("fsize", resource.RLIMIT_FSIZE, "file_bytes"),
    ("nproc", resource.RLIMIT_NPROC, "processes"),
    ("cpu", resource.RLIMIT_CPU, "cpu_seconds"),
    ("nofile", resource.RLIMIT_NOFILE, "open_files"),
)


def _rlimits(limits: Limits) -> list[tuple[str, int, int]]:
    """Return (prlimit name, resource, value) per limit, never above the hard limit we already have."""
    out = [("core", resource.RLIMIT_CORE, 0)]
    for name, which, attribute in _RLIMITS:
        value = int(getattr(limits, attribute))
        hard = resource.getrlimit(which)[1]
        out.append((name, which, value if hard == resource.RLIM_INFINITY else min(value, hard)))
    return out


def with_limits(argv: list[str], limits: Limits) -> list[str]:
    """Return `argv` started through util-linux `prlimit`, so the limits hold for the whole process tree.

    (A `preexec_fn` would do the same, but makes Python fork instead of vfork: with a large
    pytest process that cost 85 ms per tool run here, against under 1 ms for the extra exec.)
    """
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return argv
    pairs = (f"--{name}={value}:{_hard(name, which, value)}" for name, which, value in _rlimits(limits))
    return [prlimit, *pairs, "--", *argv]


def _hard(name: str, which: int, soft: int) -> int:
    """Return the hard limit paired with `soft`: a few CPU seconds above it, so the soft limit's SIGXCPU (not the
    hard limit's SIGKILL, which looks like the OOM killer's) tells that our CPU limit ended a tool."""
    if name != "cpu":
        return soft
    hard = resource.getrlimit(which)[1]
    return soft + CPU_GRACE if hard == resource.RLIM_INFINITY else max(soft, min(soft + CPU_GRACE, hard))


def _limit_child(limits: Limits) -> None:  # pragma: no cover - runs in the forked child
    for name, which, value in _rlimits(limits):
        try:
            resource.setrlimit(which, (value, _hard(name, which, value)))
        except (ValueError, OSError):
            pass


def preexec(limits: Limits) -> Callable[[], None] | None:
    """Return the `preexec_fn` that applies the limits where `prlimit` is missing, else None."""
    return None if shutil.which("prlimit") else lambda: _limit_child(limits)
