"""The one schema of the `patchwrite_*` settings: their names, types, defaults and allowed values, and how a set of
raw values becomes the check options, the diff's settings and the EDIT span.

pytest reads the values from its configuration (`plugin/settings.py`: ini settings declared from `SETTINGS`, command
line options over them), the MCP server from the same file read as data (`mcpserver/project.py`), and the command
line takes its choices from here (`commands/common.py`). Each hands `resolve` a `get(name)` and gets the same answer,
or the same `InputError` naming the setting, its value and what is allowed.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..deadline import DEFAULT_TIMEOUT
from ..edit import DEFAULT_MAX_SPAN
from ..errors import InputError
from ..files.inputs import parse_seconds
from ..gates.cachetrust import inside_work_tree
from ..gates.evidence import POLICIES
from ..snapshot.engines import ENGINES
from .check import CheckOptions
from .selfattest import EVIDENCE_FROM

#: `patchwrite_numbers`: the evidence lock's policies, and `strict` (decimals, and a number no log attests fails)
NUMBER_SETTINGS = (*POLICIES[:2], "strict", *POLICIES[2:])
DEFAULT_ENGINE = ENGINES[0]


@dataclass(frozen=True)
class Setting:
    """One ini setting: its name, help, pytest's `addini` type (None: a string) and default."""

    name: str
    help: str
    type: str | None = None
    default: Any = ""


SETTINGS: tuple[Setting, ...] = (
    Setting("patchwrite_collect", "collect root .tex manuscripts as test items", "bool", True),
    Setting("patchwrite_bib", "bibliographies every manuscript may cite from", "paths", []),
    Setting("patchwrite_log", "experimental logs that attest numbers (globs allowed)", "paths", []),
    Setting("patchwrite_engine", "default engine when a manuscript names none", None, DEFAULT_ENGINE),
    Setting("patchwrite_numbers", f"number policy: {', '.join(NUMBER_SETTINGS)}", None, "decimals"),
    Setting("patchwrite_allow", "numbers allowed without a log", "args", []),
    Setting("patchwrite_timeout", "seconds before a compile is killed", None, f"{DEFAULT_TIMEOUT:g}"),
    Setting("patchwrite_strict", "every warning fails its item", "bool", False),
    Setting(
        "patchwrite_trusted_input",
        "the manuscripts' authors are trusted: no OS sandbox, reads not confined to the manuscript's tree",
        "bool",
        False,
    ),
    Setting("patchwrite_max_runs", "most engine runs per compile (reruns until the .aux settles)", None, "5"),
    Setting("patchwrite_base", "git revision the `diff` item compares against", None, ""),
    Setting("patchwrite_evidence_from", "diff item: whose logs and bibs attest, head or base", None, "head"),
    Setting("patchwrite_max_hunk", "fail `diff` hunks longer than this many lines (off when empty)", None, ""),
    Setting("patchwrite_max_span", "longest EDIT span the try_patch fixture accepts", None, str(DEFAULT_MAX_SPAN)),
    Setting(
        "patchwrite_cache_dir",
        "verdict cache and warm states (default $XDG_CACHE_HOME/patchwrite/compile; refused inside the work tree)",
        "paths",
        [],
    ),
)
DEFAULTS = {s.name: s.default for s in SETTINGS}


@dataclass
class Resolved:
    """What a set of settings values comes to."""

    options: CheckOptions
    collect: bool
    max_span: int
    base: str | None
    max_hunk: int | None
    evidence_from: str
    cache_refused: Path | None = None  # a configured cache directory inside the work tree (never used)


def resolve(get: Callable[[str], Any], base_dir: Path, rootdir: Path, source: Path | None = None) -> Resolved:
    """Return the settings `get(name)` gives (None or absent: the default); relative paths are below `base_dir`.

    Raise InputError (at `source`, the configuration file) naming the setting, its value and what it may be.
    """

    where: Path | str = source if source is not None else ""  # pytest's own values: no file to name

    def value(name: str) -> Any:
        found = get(name)
        return DEFAULTS[name] if found is None else found

    policy = _choice(value("patchwrite_numbers"), "patchwrite_numbers", NUMBER_SETTINGS, where)
    engine = _choice(str(value("patchwrite_engine")).strip() or DEFAULT_ENGINE, "patchwrite_engine", ENGINES, where)
    try:
        timeout = parse_seconds(str(value("patchwrite_timeout")), "patchwrite_timeout")
    except InputError as exc:
        raise InputError(where, exc.problem) from None
    hunk = str(value("patchwrite_max_hunk")).strip()
    options = CheckOptions(
        default_engine=engine,
        timeout=timeout,
        max_runs=_integer(value("patchwrite_max_runs"), "patchwrite_max_runs", where),
        warnings_fail=_flag(value("patchwrite_strict"), "patchwrite_strict", where),
        bibs=[base_dir / p for p in _words(value("patchwrite_bib"))],
        logs=[base_dir / p for p in _words(value("patchwrite_log"))],
        numbers="decimals" if policy == "strict" else policy,
        strict=policy == "strict",
        allow_numbers=_words(value("patchwrite_allow")),
        trusted=_flag(value("patchwrite_trusted_input"), "patchwrite_trusted_input", where),
        rootdir=rootdir,
    )
    resolved = Resolved(
        options,
        collect=_flag(value("patchwrite_collect"), "patchwrite_collect", where),
        max_span=_integer(value("patchwrite_max_span"), "patchwrite_max_span", where),
        base=str(value("patchwrite_base")).strip() or None,
        max_hunk=_integer(hunk, "patchwrite_max_hunk", where) if hunk else None,
        evidence_from=_choice(value("patchwrite_evidence_from"), "patchwrite_evidence_from", EVIDENCE_FROM, where),
    )
    cache = _words(value("patchwrite_cache_dir"))
    if cache:
        configured = base_dir / cache[0]
        # a cache a pull request could commit to never decides a verdict (gates.cachetrust)
        if inside_work_tree(configured, source or rootdir / "x", rootdir) is None:
            options.cache_dir = configured
        else:
            resolved.cache_refused = configured
    return resolved


def _choice(value: Any, name: str, allowed: tuple[str, ...], source: Path | str) -> str:
    text = str(value).strip().lower()
    if text not in allowed:
        raise InputError(source, f"{name} = {text!r}: use {', '.join(allowed[:-1])} or {allowed[-1]}")
    return text


def _words(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return shlex.split(str(value))


def _flag(value: Any, name: str, source: Path | str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "y", "on", "t"):
        return True
    if text in ("0", "false", "no", "n", "off", "f", ""):
        return False
    raise InputError(source, f"{name} = {value!r}: use true or false")


def _integer(value: Any, name: str, source: Path | str, minimum: int = 1) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise InputError(source, f"{name} = {value!r}: not a whole number") from None
    if number < minimum:
        raise InputError(source, f"{name} = {number}: at least {minimum}")
    return number
