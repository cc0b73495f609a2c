"""The project's patchwrite settings for the MCP server, read as data from its pytest configuration file.

The pytest plugin gets these settings from pytest (`settings.from_config`); the server
runs without pytest, so it finds the same configuration file pytest would (walking up
from DIR: `pytest.ini`, `.pytest.ini`, `pyproject.toml` with `[tool.pytest.ini_options]`
or `[tool.pytest]`, `tox.ini` with `[pytest]`, `setup.cfg` with `[tool:pytest]`) and reads
the `patchwrite_*` values from it. Nothing is imported or executed: a `conftest.py` and the
extension gates it registers are not loaded. `patchwrite_trusted_input` is ignored: a
server driven by a model always runs TeX in the sandbox.
"""

from __future__ import annotations

import configparser
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..edit import DEFAULT_MAX_SPAN
from ..errors import InputError
from ..files.inputs import parse_seconds, read_text
from ..files.paths import repository_top
from ..flows.check import CheckOptions

ENGINES = ("pdflatex", "xelatex", "lualatex")
POLICIES = ("decimals", "all", "strict", "off")


@dataclass
class ProjectSettings:
    """What the server's tools are configured with: the check options, the EDIT span and the diff defaults."""

    options: CheckOptions
    max_span: int = DEFAULT_MAX_SPAN
    base: str | None = None
    max_hunk: int | None = None
    source: Path | None = None  # the configuration file read, if any
    ignored: list[str] = field(default_factory=list)  # settings read but not honoured, and why


def _ini_section(path: Path, section: str) -> dict[str, str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(read_text(path), source=str(path))
    except configparser.Error as exc:
        raise InputError(path, f"cannot be read as an ini file ({_one_line(str(exc))})") from None
    return dict(parser[section]) if parser.has_section(section) else None


def _toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]
    try:
        return tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"is not valid TOML ({exc})") from None


def _values_in(directory: Path) -> tuple[Path, dict[str, Any]] | None:
    """Return the configuration file pytest would take in `directory` and its pytest table, or None."""
    for name in ("pytest.ini", ".pytest.ini"):
        if (directory / name).is_file():
            return directory / name, _ini_section(directory / name, "pytest") or {}
    if (directory / "pyproject.toml").is_file():
        tool = _toml(directory / "pyproject.toml").get("tool", {})
        table = tool.get("pytest") if isinstance(tool, dict) else None
        if isinstance(table, dict):
            ini = table.get("ini_options")
            values = dict(ini) if isinstance(ini, dict) else {k: v for k, v in table.items() if k != "ini_options"}
            return directory / "pyproject.toml", values
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if (directory / name).is_file():
            found = _ini_section(directory / name, section)
            if found is not None:
                return directory / name, found
    return None


def find_settings_file(directory: Path) -> tuple[Path, dict[str, Any]] | None:
    """Return the configuration file and pytest values for `directory` (walking up to its repository's top)."""
    directory = directory.resolve()
    top = repository_top(directory)
    for candidate in (directory, *directory.parents):
        found = _values_in(candidate)
        if found is not None:
            return found
        if candidate == top:
            break
    return None


def _words(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return shlex.split(str(value))


def _flag(value: Any, name: str, source: Path) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "y", "on", "t"):
        return True
    if text in ("0", "false", "no", "n", "off", "f", ""):
        return False
    raise InputError(source, f"{name} = {value!r}: use true or false")


def _integer(value: Any, name: str, source: Path, minimum: int = 1) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise InputError(source, f"{name} = {value!r}: not a whole number") from None
    if number < minimum:
        raise InputError(source, f"{name} = {number}: at least {minimum}")
    return number


def load_settings(directory: Path) -> ProjectSettings:
    """Return the server's settings from the pytest configuration file that governs `directory` (defaults if none)."""
    found = find_settings_file(directory)
    if found is None:
        return ProjectSettings(CheckOptions(rootdir=directory.resolve()))
    source, values = found
    base_dir = source.parent
    get = values.get
    policy = str(get("patchwrite_numbers", "decimals")).strip().lower()
    if policy not in POLICIES:
        raise InputError(source, f"patchwrite_numbers = {policy!r}: use decimals, all, strict or off")
    engine = str(get("patchwrite_engine", "pdflatex")).strip() or "pdflatex"
    if engine not in ENGINES:
        raise InputError(source, f"patchwrite_engine = {engine!r}: use pdflatex, xelatex or lualatex")
    try:
        timeout = parse_seconds(str(get("patchwrite_timeout", "60")), "patchwrite_timeout")
    except InputError as exc:
        raise InputError(source, exc.problem) from None
    hunk = str(get("patchwrite_max_hunk", "")).strip()
    options = CheckOptions(
        default_engine=engine,
        timeout=timeout,
        max_runs=_integer(get("patchwrite_max_runs", 5), "patchwrite_max_runs", source),
        warnings_fail=_flag(get("patchwrite_strict", False), "patchwrite_strict", source),
        bibs=[base_dir / p for p in _words(get("patchwrite_bib", []))],
        logs=[base_dir / p for p in _words(get("patchwrite_log", []))],
        numbers="decimals" if policy == "strict" else policy,
        strict=policy == "strict",
        allow_numbers=_words(get("patchwrite_allow", [])),
        trusted=False,
        rootdir=base_dir,
    )
    ignored = []
    cache = _words(get("patchwrite_cache_dir", []))
    if cache:
        from ..gates.cachetrust import inside_work_tree

        configured = base_dir / cache[0]
        if inside_work_tree(configured, source, base_dir) is None:
            options.cache_dir = configured
        else:  # as the plugin does: a cache a pull request could commit to never decides a verdict
            ignored.append("patchwrite_cache_dir (inside the work tree; the user cache is used)")
    if _flag(get("patchwrite_trusted_input", False), "patchwrite_trusted_input", source):
        ignored.append("patchwrite_trusted_input (the server always runs TeX in the sandbox)")
    return ProjectSettings(
        options,
        max_span=_integer(get("patchwrite_max_span", DEFAULT_MAX_SPAN), "patchwrite_max_span", source),
        base=str(get("patchwrite_base", "")).strip() or None,
        max_hunk=_integer(hunk, "patchwrite_max_hunk", source) if hunk else None,
        source=source,
        ignored=ignored,
    )


def _one_line(message: str) -> str:
    return " ".join(message.split())[:300]
