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
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..edit import DEFAULT_MAX_SPAN
from ..errors import InputError
from ..files.inputs import read_text
from ..files.paths import repository_top
from ..flows.check import CheckOptions
from ..flows.schema import resolve


@dataclass
class ProjectSettings:
    """What the server's tools are configured with: the check options, the EDIT span and the diff defaults."""

    options: CheckOptions
    max_span: int = DEFAULT_MAX_SPAN
    base: str | None = None
    max_hunk: int | None = None
    evidence_from: str = "head"  # which revision's logs and bibs attest in `diff` (flows.selfattest)
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


def load_settings(directory: Path) -> ProjectSettings:
    """Return the server's settings from the pytest configuration file that governs `directory` (defaults if none),
    read through the one schema pytest reads them through (`flows.schema`)."""
    found = find_settings_file(directory)
    if found is None:
        return ProjectSettings(CheckOptions(rootdir=directory.resolve()))
    source, values = found
    resolved = resolve(values.get, source.parent, source.parent, source)
    ignored = []
    if resolved.cache_refused is not None:  # as the plugin does: a cache a pull request could commit to never decides
        ignored.append("patchwrite_cache_dir (inside the work tree; the user cache is used)")
    if resolved.options.trusted:
        resolved.options.trusted = False
        ignored.append("patchwrite_trusted_input (the server always runs TeX in the sandbox)")
    return ProjectSettings(
        resolved.options,
        max_span=resolved.max_span,
        base=resolved.base,
        max_hunk=resolved.max_hunk,
        evidence_from=resolved.evidence_from,
        source=source,
        ignored=ignored,
    )


def _one_line(message: str) -> str:
    return " ".join(message.split())[:300]
