"""Evidence written by the change: a number or cite key the diff item sees attested only by what the change added.

A pull request can add `99.1` to the paper and `"acc": 99.1` to `results.json` in the
same commit, or a `.bib` entry for the key it cites; the locks then say "attested". The
base revision's logs and bibliographies tell which attestations the change wrote itself.
`head` (the default) keeps them as attesting and says so in a warning located at the
number and at the log line; `base` lets only the base's logs and bibs attest (an error).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from ..errors import InputError
from ..gates.headrules import bibitems, line_opcodes
from ..model import ERROR, WARNING, Violation, relative_name
from ..numbers.explog import _NUMERIC, EvidenceLog, load_log_text
from ..snapshot.bib import entry_fields, parse_bib_text

EVIDENCE_FROM = ("head", "base")
KIND = "attested_by_change"


class BaseEvidence:
    """What the base revision's versions of the declared logs and bibliographies attest."""

    def __init__(self, logs: list[Path], bibs: list[Path], base_text: Callable[[Path], str | None]) -> None:
        self.base_text = base_text
        self.log = EvidenceLog()
        self.keys: set[str] = set()
        self.new_logs: list[Path] = []
        for path in logs:
            text = self._text(path)
            if text is None:
                self.new_logs.append(path)
                continue
            try:
                load_log_text(path, text, self.log)
            except InputError:
                continue  # the base's copy cannot be read: it attests nothing
        for path in bibs:
            text = self._text(path)
            if text is not None:
                self.keys.update(parse_bib_text(path, text)[0])

    def _text(self, path: Path) -> str | None:
        try:
            return self.base_text(path)
        except ValueError:  # outside the repository: no base copy (a system .bib) attests as it always did
            return _read(path)

    def number(self, value: Decimal) -> bool:
        """Return whether the base's logs attest `value` (the pool rule)."""
        return self.log.attests(value)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def number_note(
    value: Decimal, token: str, file: str, line: int, logs: list[Path], base: BaseEvidence, mode: str, top: Path
) -> Violation | None:
    """Return the violation for a number the change added that only the change's own log values attest, or None."""
    if base.number(value):
        return None
    for log in logs:
        at = _log_line(log, base, value)
        if at:
            where = f"{relative_name(log, top)}:{at}"
            what = "a new file under a declared log glob" if log in base.new_logs else "a value this change added"
            return _note(file, line, token, f"is attested only by {where}, {what}", mode)
    return None


def cite_note(key: str, file: str, line: int, defined_at: str, base: BaseEvidence, mode: str, top: Path) -> Violation:
    """Return the violation for a cite key the base's bibliographies do not define (the change added its entry)."""
    bib, _, at = defined_at.rpartition(":")
    where = f"{relative_name(bib, top)}:{at}" if bib else defined_at
    return _note(file, line, key, f"is defined only by {where}, an entry this change added", mode)


def _note(file: str, line: int, token: str, message: str, mode: str) -> Violation:
    if mode == "base":
        return Violation(KIND, file, line, token, message + " (evidence-from base: only the base's logs and bibs "
                         "attest)", ERROR)  # fmt: skip
    return Violation(KIND, file, line, token, message + "; review that evidence (evidence-from base makes it an error)",
                     WARNING)  # fmt: skip


def _log_line(log: Path, base: BaseEvidence, value: Decimal) -> int:
    """Return the first line the change wrote in `log` whose numbers attest `value` (0: none)."""
    new = _read(log)
    if new is None:
        return 0
    old = base._text(log) or ""
    for tag, _i1, _i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            continue
        lines = new.splitlines()
        for number in range(j1, j2):
            probe = EvidenceLog()
            probe.add_many(_NUMERIC.findall(lines[number]) if number < len(lines) else [])
            if probe.attests(value):
                return number + 1
    return 0


def parse_mode(value: str, where: str) -> str:
    """Return `head` or `base`; raise InputError naming `where` for anything else."""
    mode = value.strip().lower()
    if mode not in EVIDENCE_FROM:
        raise InputError(where, f"{value!r}: use head or base")
    return mode


def change_notes(
    changes: list[Violation],
    numbers: dict[tuple[str, int, str], Decimal],
    evidence: object,
    base_text: Callable[[Path], str | None],
    mode: str,
    top: Path,
    changed_texts: dict[Path, tuple[str, str]] | None = None,
) -> list[Violation]:
    """Return, for the numbers and cite keys a change added or moved, those only the change's own evidence attests.

    `numbers`: (file, line, printed) -> value of the working tree's numbers; `evidence`: its EvidenceReport;
    `changed_texts`: path -> (base text, new text) of the manuscript's files the change touched (a `\\bibitem` the
    change wrote is evidence it wrote, like a `.bib` entry).
    """
    from ..snapshot.bib import load_bibliography

    log = getattr(evidence, "log", None)
    logs: list[Path] = list(getattr(evidence, "log_files", []))
    bibs: list[Path] = list(getattr(evidence, "bib_files", []))
    wanted = [c for c in changes if c.kind in ("added_number", "moved_number", "added_cite", "moved_cite")]
    items = _added_bibitems(changed_texts or {}) if any(c.kind.endswith("_cite") for c in wanted) else {}
    if not wanted or (not logs and not bibs and not items):
        return []
    base = BaseEvidence(logs, bibs, base_text)
    keys = load_bibliography(bibs).keys if bibs else {}
    out: list[Violation] = []
    for c in wanted:
        if c.kind.endswith("_number"):
            value = numbers.get((c.file, c.line, c.token))
            if value is not None and log is not None and log.attests(value):
                note = number_note(value, c.token, c.file, c.line, logs, base, mode, top)
                out.extend([note] if note else [])
        elif c.token in keys and c.token not in base.keys and not keys[c.token].rpartition(":")[0].endswith(".tex"):
            out.append(cite_note(c.token, c.file, c.line, keys[c.token], base, mode, top))
        elif c.token in items and c.token not in keys and c.token not in base.keys:
            path, at = items[c.token]
            where = f"{relative_name(path, top)}:{at}"
            message = f"is defined only by {where}, a \\bibitem this change added"
            out.append(_note(c.file, c.line, c.token, message, mode))
    return out


def _added_bibitems(changed_texts: dict[Path, tuple[str, str]]) -> dict[str, tuple[Path, int]]:
    """Return the keys a `\\bibitem` of the new texts defines that no `\\bibitem` of their base texts defined."""
    old: set[str] = set()
    new: dict[str, tuple[Path, int]] = {}
    for path, (base_text, text) in changed_texts.items():
        old.update(key for key, _ in bibitems(base_text, path))
        for key, line in bibitems(text, path):
            new.setdefault(key, (path, line))
    return {key: where for key, where in new.items() if key not in old}


def bib_entry_notes(
    bibs: list[Path], base_text: Callable[[Path], str | None], cited: set[str], mode: str
) -> list[Violation]:
    """Return a `bib_changed` note per cited key whose `.bib` entry the change rewrote (the base's copy of the
    same file held it with other fields): the text still cites the key, the key now names another work."""
    out: list[Violation] = []
    for bib in bibs:
        try:
            old = base_text(bib)
        except ValueError:  # outside the repository: no base copy
            continue
        new = _read(bib)
        if old is None or new is None or old == new:
            continue
        before, after = entry_fields(old), entry_fields(new)
        for key in sorted(cited & before.keys() & after.keys()):
            (_, was), (line, now) = before[key], after[key]
            if was == now:
                continue
            fields = ", ".join(sorted(k.lstrip("@") for k in was.keys() | now.keys() if was.get(k) != now.get(k)))
            message = f"entry rewritten by this change ({fields} changed): every citation of {key} now points at it"
            if mode == "base":
                out.append(Violation("bib_changed", str(bib), line, key, message + " (evidence-from base)", ERROR))
            else:
                message += "; review it (evidence-from base makes it an error)"
                out.append(Violation("bib_changed", str(bib), line, key, message, WARNING))
    return out
