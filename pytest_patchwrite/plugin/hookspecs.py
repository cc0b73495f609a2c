"""Extension points of pytest-patchwrite (registered through `pytest_addhooks`)."""

from __future__ import annotations

from typing import Any

import pytest


def pytest_patchwrite_gates(config: pytest.Config) -> list[Any] | None:
    """Return extra gates (objects with `stage` and `check(text, context)`) to run on every manuscript.

    Each gate becomes a test item named after its `stage` and joins the gates of
    the `manuscript` and `try_patch` fixtures, after the compile and evidence gates.
    """


@pytest.hookspec(firstresult=True)
def pytest_patchwrite_propose(manuscript: Any, note: str) -> str | None:
    """Return a model's raw reply (an `EDIT N M` block) repairing `manuscript` as `note` describes."""
