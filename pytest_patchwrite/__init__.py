"""pytest-patchwrite: keep LaTeX manuscripts valid while people and agents edit them."""

from .edit import Edit, EditError, apply_edit, number_lines, parse_edit
from .errors import InputError
from .model import Gate, GateResult, PatchContext, PatchwriteWarning, Violation
from .transaction import PatchResult, try_patch

__version__ = "0.1.0"

__all__ = [
    "Edit",
    "EditError",
    "Gate",
    "GateResult",
    "InputError",
    "PatchContext",
    "PatchResult",
    "PatchwriteWarning",
    "Violation",
    "apply_edit",
    "number_lines",
    "parse_edit",
    "try_patch",
]
