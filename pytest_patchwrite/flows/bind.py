"""The bind use case: `patchwrite bind`, the `--patchwrite-bind` session and the MCP `bind` tool call it.

`bind_root` binds a manuscript's numbers against its declared logs (`gates.binding.reconcile`) and returns the
bindings file it would write (`BindOutcome`); `write_bindings` replaces that file atomically; `outcome_json` is the
`bind --json` object.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files.tempfiles import TEMP_SUFFIX, temp_file_prefix
from ..gates.binding import (
    Reconciled,
    allowed_numbers,
    bindings_location,
    declared_logs,
    read_bindings,
    read_for_locks,
    reconcile,
)
from ..gates.evidence import EvidenceConfig
from ..gates.ledger import Ledger
from ..gates.numberlock import lock_violations
from ..model import display_path, relative_name
from ..numbers.binder import occurrences
from ..numbers.bindfile import OldBindings, dumps, to_json
from ..snapshot.manuscript import Manuscript, load_manuscript
from ..tex.latex import scan
from ..tex.texconditionals import false_conditionals
from ..tex.texnumbers import document_language


@dataclass
class BindOutcome:
    """What `patchwrite bind` found for one manuscript and the bindings file text it would write."""

    root: Path
    path: Path
    reconciled: Reconciled
    old_text: str | None
    new_text: str
    ledger: Ledger | None = None

    @property
    def changed(self) -> bool:
        """Return whether writing would change the file."""
        return self.old_text != self.new_text

    @property
    def conflicts(self) -> int:
        """Return how many reviewed decisions no longer hold and were kept (`bind` exits 1; `--update` accepts)."""
        return len(self.ledger.conflicts) if self.ledger is not None else 0


def bind_root(
    root: Path | Manuscript,
    config: EvidenceConfig,
    *,
    update: bool = False,
    manual: tuple[str, ...] = (),
    reason: str | None = None,
) -> BindOutcome:
    """Return what `patchwrite bind` would write for the manuscript rooted at `root` (or its snapshot): the file's
    decisions that hold kept byte for byte, new numbers bound, a decision that no longer holds kept as a conflict
    (`update`: replaced by the fresh decision, and a version 1 file rebound from scratch); `manual` (FILE:LINE:TOKEN
    or `unattested`) recorded as typed by hand with `reason`. Nothing is written."""
    from ..gates.ledger import build_ledger, manual_targets

    manuscript = root if isinstance(root, Manuscript) else load_manuscript(root, boundary=config.boundary(root))
    config = config.for_manuscript(manuscript)
    if not config.logs:
        raise InputError(manuscript.root, "declares no experimental log (`% !patchwrite log = FILE`); "
                         "`patchwrite bind --suggest` lists files that would attest its numbers")  # fmt: skip
    logs = declared_logs(manuscript, config.logs)  # as `check`: a log that leads outside the tree is exit 2 at its line
    path = bindings_location(manuscript)
    try:
        old_text, existing = read_bindings(path, manuscript)
    except OldBindings as exc:
        if not update:
            raise
        old_text, existing = exc.text, None
    false_ifs = false_conditionals(manuscript.texts.values())
    language = document_language(manuscript.texts[p] for p in manuscript.files)
    scans = [scan(manuscript.texts[p], str(p), false_ifs, None, language) for p in manuscript.files]
    policy = "decimals" if config.numbers == "off" else config.numbers
    occs = occurrences(scans, manuscript.texts, policy, allowed_numbers(config.allow_numbers))
    datas = read_for_locks(manuscript, scans, logs, occs, existing, need_pool=False).datas
    rec = reconcile(scans, manuscript.texts, datas, occs, existing, manuscript.directory, manuscript.root)
    ledger = build_ledger(rec, update, manual_targets(rec, manual, reason, manuscript), reason or "")
    new_text = dumps(to_json(ledger.rows, manuscript.root))
    return BindOutcome(manuscript.root, path, rec, old_text, new_text, ledger)


def write_bindings(path: Path, text: str) -> None:
    """Replace the bindings file atomically (temp file in its directory, then rename); raise InputError if it cannot."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_file_prefix(path), suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise InputError(path.parent, f"cannot hold the bindings file ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise InputError(path, f"cannot be written ({exc.strerror})") from None
        raise


def outcome_json(outcome: BindOutcome) -> dict[str, Any]:
    """Return the `bind --json` object: bindings, numbers without a decision, conflicts, changes and counts."""
    rec, ledger = outcome.reconciled, outcome.ledger
    assert ledger is not None
    base = outcome.root.parent
    bindings = []
    for row in json.loads(outcome.new_text)["bindings"]:
        bindings.append({k: row[k] for k in ("file", "line", "token", "log", "at", "value", "transform",
                                              "formula", "alternatives", "reason") if k in row})  # fmt: skip
    unattested = [{"file": relative_name(o.file, base), "line": o.number.line, "token": o.token}
                  for o in (rec.occurrences[i] for i in ledger.undecided)]  # fmt: skip
    mismatches = {(v.file, v.line, v.token): v.shown_message(Path.cwd()) for v in lock_violations(rec)
                  if v.kind == "binding_mismatch"}  # fmt: skip
    conflicts = []
    for i in ledger.conflicts:
        occ = rec.occurrences[i]
        conflicts.append({"file": relative_name(occ.file, base), "line": occ.number.line, "token": occ.token,
                          "message": mismatches.get((str(occ.file), occ.number.line, occ.token), "")})  # fmt: skip
    return {
        "path": display_path(outcome.path, Path.cwd()),
        "changed": outcome.changed,
        "bindings": bindings,
        "unattested": sorted(unattested, key=lambda u: (u["file"], u["line"])),
        "conflicts": conflicts,
        "changes": list(ledger.changes),
        "counts": {**rec.result.counts(), "stale": len(rec.stale), "coincidental": rec.result.coincidental,
                   "conflicts": len(conflicts), "manual": sum(r.manual for r in ledger.rows)},
    }  # fmt: skip
