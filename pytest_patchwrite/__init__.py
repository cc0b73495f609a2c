"""pytest-patchwrite: keep LaTeX manuscripts valid while people and agents edit them.

This module is the public Python surface (docs/api.md): import these names from `pytest_patchwrite`, not from the
module that defines them, which may move. The names of the snapshot, the gates and the flows load on first use, so
`import pytest_patchwrite` (and `patchwrite --help`) stays as light as it was.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .edit import Edit, EditError, apply_edit, number_lines, parse_edit
from .errors import InputError, PatchwriteError
from .flows.transaction import PatchResult, try_patch
from .model import Gate, GateResult, PatchContext, PatchwriteWarning, Violation

if TYPE_CHECKING:
    from .flows.bind import BindOutcome, bind_root
    from .flows.check import CheckOptions, check_manuscript
    from .flows.prdiff import diff_manuscript
    from .gates.compile import CompileGate
    from .gates.evidence import EvidenceConfig, EvidenceReport, evaluate
    from .gates.report import CompileReport
    from .snapshot.manuscript import Manuscript, load_manuscript
    from .snapshot.roots import find_root
    from .snapshot.snapshot import EngineRecord, pair_for
    from .tex.magic import magic_comments

__version__ = "0.1.0"

#: the names loaded on first use, and the module that defines each
_LAZY = {
    "BindOutcome": "flows.bind",
    "bind_root": "flows.bind",
    "CheckOptions": "flows.check",
    "check_manuscript": "flows.check",
    "diff_manuscript": "flows.prdiff",
    "CompileGate": "gates.compile",
    "CompileReport": "gates.report",
    "EvidenceConfig": "gates.evidence",
    "EvidenceReport": "gates.evidence",
    "evaluate": "gates.evidence",
    "Manuscript": "snapshot.manuscript",
    "load_manuscript": "snapshot.manuscript",
    "find_root": "snapshot.roots",
    "magic_comments": "tex.magic",
    "EngineRecord": "snapshot.snapshot",
    "pair_for": "snapshot.snapshot",
}


def __getattr__(name: str) -> Any:
    """Return a public name of the snapshot, the gates or the flows, importing its module on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BindOutcome",
    "CheckOptions",
    "CompileGate",
    "CompileReport",
    "Edit",
    "EditError",
    "EngineRecord",
    "EvidenceConfig",
    "EvidenceReport",
    "Gate",
    "GateResult",
    "InputError",
    "Manuscript",
    "PatchContext",
    "PatchResult",
    "PatchwriteError",
    "PatchwriteWarning",
    "Violation",
    "apply_edit",
    "bind_root",
    "check_manuscript",
    "diff_manuscript",
    "evaluate",
    "find_root",
    "load_manuscript",
    "magic_comments",
    "number_lines",
    "pair_for",
    "parse_edit",
    "try_patch",
]
