"""The pytest plugin: markers, options and fixtures for manuscripts."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "patchwrite: a check of a LaTeX manuscript by pytest-patchwrite")
