"""Environment faults under pytest: an item the machine stopped is an error (E), never a failure (F).

A full disk, a killed engine or another writer saving during `try_patch` says nothing about the
manuscript or the code under test, wherever it was raised (a patchwrite item, a fixture, a test body
calling the fixtures): the report shows one line, `patchwrite: environment error: PLACE: cause; remedy`.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..errors import EnvironmentFault


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.excinfo is not None and isinstance(call.excinfo.value, EnvironmentFault):
        shown = call.excinfo.value.format(item.config.invocation_params.dir)
        report.longrepr = f"patchwrite: environment error: {shown}"
        report.patchwrite_environment = True  # crosses to the xdist controller with the report
    return report


def pytest_report_teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    if is_environment_error(report):
        return "error", "E", "ERROR"
    return None


def is_environment_error(report: pytest.TestReport) -> bool:
    """Return whether an environment fault, not a verdict, ended this report's phase."""
    return bool(getattr(report, "patchwrite_environment", False)) and report.failed
