"""The number lock as the evidence gate runs it: the declared logs, then the bindings file when there is one
(`numberlock` says what it reports), else the pool rule (a printed number some logged value attests passes)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..model import WARNING, Violation
from ..numbers.binder import occurrences
from ..numbers.bindfile import FileBinding, parse
from ..numbers.explog import EvidenceLog
from ..numeric import parse_number
from ..snapshot.manuscript import Manuscript
from ..tex.latex import Scan
from .binding import allowed_numbers, bindings_location, declared_logs, read_bindings, read_for_locks, reconcile
from .citelock import name_list
from .numberlock import lock_violations


class NumberSettings(Protocol):
    """What of the evidence configuration the number lock reads (an `EvidenceConfig` is one)."""

    @property
    def logs(self) -> list[str | Path]: ...
    @property
    def numbers(self) -> str: ...
    @property
    def strict(self) -> bool: ...
    @property
    def allow_numbers(self) -> list[str]: ...


@dataclass
class Numbers:
    """The number lock's findings (None: not judged), the log pool it read and how it judged."""

    found: list[Violation] | None = None
    log: EvidenceLog | None = None
    pool_only: int = 0
    bindings_file: Path | None = None


def number_lock(
    manuscript: Manuscript,
    scans: list[Scan],
    config: NumberSettings,
    config_text: str,
    bindings_given: tuple[str | None, bool],
    reading: Callable[[str], None],
) -> Numbers:
    """Return the number lock's findings: by the bindings file when there is one (`bindings_given`: the base's text
    and whether the file on disk counts), else by the pool of logged values (`reading` hears which logs it reads,
    what a timeout names)."""
    if not config.logs:
        return Numbers()
    paths = declared_logs(manuscript, config.logs, config_text)  # a log outside the tree: exit 2, as for bind
    reading("while the number locks read " + _sizes(paths))
    bindings = None
    if config.numbers != "off":
        bindings = _bindings(manuscript, config_text, *bindings_given)
    if bindings is None:
        log = read_for_locks(manuscript, scans, paths).pool
        if config.numbers == "off":
            return Numbers(None, log)
        found, pool_only = _number_violations(scans, log, config)
        return Numbers(found, log, pool_only)
    bindings_file, existing = bindings
    occs = occurrences(scans, manuscript.texts, config.numbers, allowed_numbers(config.allow_numbers))
    logs = read_for_locks(manuscript, scans, paths, occs, existing)  # one read for the pool and the lock
    found = lock_violations(reconcile(scans, manuscript.texts, logs.datas, occs, existing, manuscript.directory,
                                      manuscript.root))  # fmt: skip
    return Numbers(found, logs.pool, 0, bindings_file)


def _bindings(
    manuscript: Manuscript, root_text: str, text: str | None, from_disk: bool
) -> tuple[Path, list[FileBinding]] | None:
    """Return the bindings file the lock judges by and its bindings, None when there is none (the pool rule)."""
    path = bindings_location(manuscript, root_text)
    if text is not None:
        return path, parse(text, path, manuscript.root)
    if not from_disk:
        return None
    _, existing = read_bindings(path, manuscript)
    return None if existing is None else (path, existing)


def _number_violations(scans: list[Scan], log: EvidenceLog, config: NumberSettings) -> tuple[list[Violation], int]:
    allowed = {value for item in config.allow_numbers if (value := parse_number(str(item).rstrip("%"))) is not None}
    mode = "strict" if config.strict else config.numbers
    # a finding names the logs it concerns: one or two by name, more by count (not six names on each of 148 lines)
    logs = name_list(log.files) if len(log.files) <= 2 else f"none of the {len(log.files)} declared"
    out: list[Violation] = []
    passed = 0
    for s in scans:
        unattested, ours = [], set()
        for n in s.numbers:
            if not n.pooled(config.numbers) or n.value in allowed or s.is_suppressed(n.line, "number"):
                continue
            printed = re.sub(r"\\percent|\\%|%|\\,|~|\{,\}|,|\s", "", n.text)
            if any(log.attests(value, printed, strict=config.strict) for value in n.readings or (n.value,)):
                ours.add(n.sentence)
                passed += 1
                continue
            unattested.append(n)
        for n in unattested:
            message = f"is not attested (policy: {mode}; logs: {logs}); {n.reads_as()}"
            keys = s.cited_sentences.get(n.sentence)
            # a sentence that also prints a logged number reports this paper's results, whatever it cites
            if keys and n.sentence not in ours:
                cited = ", ".join(dict.fromkeys(keys))
                message += f"its sentence cites {cited}: reported as that work's result, not checked against a log"
                out.append(Violation("cited_number", n.file, n.line, n.text, message, WARNING))
                continue
            message += "add it to a log or mark the line `% patchwrite: ignore number`"
            out.append(Violation("unattested_number", n.file, n.line, n.text, message))
    return out, passed


def _sizes(paths: list[Path]) -> str:
    """Return the logs' names and sizes (`log.csv (300 MB)`), what a timeout in the number locks was reading."""
    shown = []
    for path in paths:
        try:
            shown.append(f"{path.name} ({path.stat().st_size / (1 << 20):.0f} MB)")
        except OSError:
            shown.append(path.name)
    return ", ".join(shown) or "no log"
