"""What `check` reports from a bindings file: binding_mismatch, unbound_number, unattested_number, stale_binding.

The lock's own findings (`binding_mismatch`, `unbound_number`, `stale_binding`) say that the file and the paper
disagree; after a fresh `bind` there are none. A number with no decision (unattested, or fitting several entries
alike) is `unattested_number` with the command that records it.

Each finding names the entries it concerns (never every declared log) and the command that settles it: the
expected value is shown in the number's own printed form, alternatives once each, and "fits no log entry" only
when no entry holds the value (else which entry holds it and why it was not bound).
"""

from __future__ import annotations

import re
import shlex
from decimal import Decimal, localcontext
from pathlib import Path

from ..model import WARNING, Violation, relative_name
from ..numbers.binder import Occurrence, factor_of, transforms
from ..numbers.bindfile import FileBinding
from ..numbers.bindswap import SWAPPED
from ..numbers.derived import describe
from .binding import Reconciled

_NUMERAL = re.compile(r"\d(?:[\d,]|\{,\}|\\,)*(?:\.\d+)?")
#: digits a value is written out to in the number's own form; beyond, it is shown as the log writes it
_LONGEST_SHOWN = 60
#: entries named per finding at most
NAMED_ENTRIES = 3


def format_as(value: Decimal, token: str) -> str:
    """Return `value` printed as `token` prints its number: its precision and its decoration (`91.4\\%`)."""
    m = _NUMERAL.search(token)
    if m is None:
        return str(value)
    places = len(m.group(0).split(".", 1)[1]) if "." in m.group(0) else 0
    if not value.is_finite() or value.adjusted() + places > _LONGEST_SHOWN:  # 1e999999999: as the log writes it
        return str(value)
    with localcontext() as ctx:
        ctx.prec = max(28, value.adjusted() + places + 3)  # by magnitude: 4E+31 has one digit and 32 places
        shown = str(abs(value).quantize(Decimal(1).scaleb(-places)))
    signed = value < 0 and "-" not in token[: m.start()] and "−" not in token[: m.start()]
    separator = next((s for s in ("{,}", "\\,", ",") if s in m.group(0)), None)
    if separator is not None:  # grouped as printed: `10{,}578` expects `10{,}579`, not `10579`
        whole, dot, fraction = shown.partition(".")
        groups = [whole[max(0, k - 3) : k] for k in range(len(whole), 0, -3)][::-1]
        shown = separator.join(groups) + dot + fraction
    return token[: m.start()] + ("-" if signed else "") + shown + token[m.end() :]


def listed(names: list[str]) -> str:
    """Return distinct entry names, comma-separated, at most NAMED_ENTRIES of them (`..., and 3 more`)."""
    names = list(dict.fromkeys(names))
    more = f", and {len(names) - NAMED_ENTRIES} more" if len(names) > NAMED_ENTRIES else ""
    return ", ".join(names[:NAMED_ENTRIES]) + more


def _name(log: Path | None, at: str | None, base: Path) -> str:
    return f"{relative_name(log, base) if log is not None else '?'} {at}"


def _place(occ: Occurrence) -> str:
    """Return the number's place as `--manual` takes it: its file's absolute path (`_paths`), line and token, quoted
    for a shell when the token needs it (`95\\%`, `10{,}578`: bash would eat the backslash or expand the braces)."""
    return shlex.quote(f"{occ.file}:{occ.number.line}:{occ.token}")


def _bind(rec: Reconciled) -> str:
    return f"patchwrite bind {rec.root}" if rec.root is not None else "patchwrite bind"


def _paths(rec: Reconciled, *files: Path) -> tuple[str, ...]:
    """Return the absolute paths a message names, which the face shows as it shows the finding's file (so the
    command works where the face runs: `patchwrite bind b/main.tex` under `check DIR`); never cached as text."""
    return tuple(str(p) for p in (rec.root, *files) if p is not None)


def signed(occ: Occurrence) -> str:
    """Return the number's token with the sign it is read with: `-91.4` for a `$-$91.4` whose token (`91.4`) does
    not hold its minus (typeset apart from it), else the token as it stands."""
    m = _NUMERAL.search(occ.token)
    if m is None or occ.number.value >= 0 or any(c in occ.token[: m.start()] for c in "-−"):
        return occ.token
    return occ.token[: m.start()] + "-" + occ.token[m.start() :]


def _mismatch(rec: Reconciled, occ: Occurrence, binding: FileBinding, values: list[Decimal], raw: str | None) -> str:
    accept = f"; `{_bind(rec)} --update` accepts the change"
    read = signed(occ)  # the lock compares the signed value: say so where the token hides the minus
    if read != occ.token:
        return f"(read as {read}: its minus stands apart) {_mismatch_why(rec, binding, values, raw, accept)}"
    return _mismatch_why(rec, binding, values, raw, accept)


def _mismatch_why(rec: Reconciled, binding: FileBinding, values: list[Decimal], raw: str | None, accept: str) -> str:
    if binding.manual:
        return f"is recorded as typed by hand: {binding.value} ({binding.reason}){accept}"
    name = _name(binding.log, binding.at, rec.base)
    if not values:
        return f"is bound to {name}, which the log no longer holds{accept}"
    shown = raw if raw is not None else format(float(values[0]), ".12g")
    how = "" if binding.transform in ("identity", "percent", "derived") else f" ({binding.transform})"
    return f"is bound to {name} = {shown}{how}, which prints as {format_as(values[0], binding.token)}{accept}"


def holders(rec: Reconciled, occ: Occurrence) -> list[str]:
    """Return the entries (`log locator = raw`) whose value the number prints, under a transform it allows."""
    if rec.index is None:
        return []
    found: dict[str, str] = {}
    for transform, _ in transforms(occ):
        power = factor_of(transform)
        if power is None:
            continue
        for entry, _value in rec.index.fitting(occ.number.value, power):
            found.setdefault(_name(entry.log, entry.at, rec.base), entry.raw)
            if len(found) >= NAMED_ENTRIES:
                break
    return [f"{name} = {raw}" for name, raw in found.items()]


def _unattested(rec: Reconciled, occ: Occurrence) -> str:
    record = f"`{_bind(rec)} --manual {_place(occ)} --reason not_logged`"
    held = holders(rec, occ)
    if not held:
        return (f"fits no log entry; add it to a log, record it as typed by hand ({record}), or mark the line "
                "`% patchwrite: ignore number`")  # fmt: skip
    return (f"is held by {', '.join(held)}, but nothing around it names that entry (a value alone may match by "
            f"chance), so it is not bound; name the entry beside the number and rerun `{_bind(rec)}`, or record "
            f"it as typed by hand: {record}")  # fmt: skip


def swapped(rec: Reconciled, occ: Occurrence, advice: bool = True) -> str:
    """Return why a number of a crossed pair is not bound (`bindswap`): its words name the other's entry; with
    `advice`, the command that records it by hand."""
    i = next(k for k, o in enumerate(rec.occurrences) if o is occ)
    other = rec.occurrences[rec.swapped[i]]
    mine, theirs = rec.decisions[i].best, rec.decisions[rec.swapped[i]].best
    return (f"prints {_name(mine.entry.log, mine.entry.at, rec.base)} = {mine.entry.raw}, but its words name "
            f"{_name(theirs.entry.log, theirs.entry.at, rec.base)}, which prints as "
            f"{format_as(theirs.value, occ.token)} and stands at line {other.number.line} ({other.token}), whose "
            "words name this one's entry: the two look swapped, so neither is bound"
            + (f"; fix the paper, or record it as typed by hand: `{_bind(rec)} --manual {_place(occ)} --reason TEXT`"
               if advice else ""))  # fmt: skip


def lock_violations(rec: Reconciled) -> list[Violation]:
    """Return the lock's findings: binding_mismatch, unbound_number, unattested_number, stale_binding."""
    out: list[Violation] = []
    base = rec.base
    mismatched = {id(occ) for occ, _, _, _ in rec.mismatched}
    for occ, binding, values, raw in rec.mismatched:
        message = _mismatch(rec, occ, binding, values, raw)
        out.append(Violation("binding_mismatch", str(occ.file), occ.number.line, occ.token, message,
                             paths=_paths(rec)))  # fmt: skip
    for bound in rec.result.bound:
        occ = bound.occurrence
        if id(occ) not in rec.fresh or id(occ) in mismatched:
            continue
        best = _name(bound.best.entry.log, bound.best.entry.at, base)
        if bound.best.transform == "derived" and bound.best.formula is not None:
            best = f"{describe(bound.best.formula)} (derived)"
        if bound.how == SWAPPED:  # no decision either: the paper prints another entry's value here
            out.append(Violation("unattested_number", str(occ.file), occ.number.line, occ.token, swapped(rec, occ),
                                 paths=_paths(rec, occ.file)))  # fmt: skip
        elif bound.how == "ambiguous":  # no decision, as after a fresh bind: not the lock's, the number's finding
            names = listed([best, *(_name(c.entry.log, c.entry.at, base) for c in bound.alternatives)])
            message = (f"fits several entries alike ({names}), and nothing around it tells which it "
                       "reports, so it is not bound; name the entry beside the number and rerun "
                       f"`{_bind(rec)}`, or record it as typed by hand: `{_bind(rec)} --manual "
                       f"{_place(occ)} --reason TEXT`")  # fmt: skip
            out.append(Violation("unattested_number", str(occ.file), occ.number.line, occ.token, message,
                                 paths=_paths(rec, occ.file)))  # fmt: skip
        else:
            message = f"is not in the bindings file; `{_bind(rec)}` binds it to {best}"
            out.append(Violation("unbound_number", str(occ.file), occ.number.line, occ.token, message, WARNING,
                                 _paths(rec)))  # fmt: skip
    ours = {(b.occurrence.file, b.occurrence.number.sentence) for b in rec.result.bound}
    for occ in rec.result.unattested:
        if id(occ) in mismatched or id(occ) not in rec.fresh:
            continue
        keys = rec.cited.get((occ.file, occ.number.sentence))
        # as the pool rule: a sentence that also prints a bound number reports this paper's results
        if keys and (occ.file, occ.number.sentence) not in ours:
            cited = ", ".join(dict.fromkeys(keys))
            held = holders(rec, occ)  # "fits no log entry" only when none holds it
            fits = f"is held by {', '.join(held)}, but" if held else "fits no log entry;"
            message = f"{fits} its sentence cites {cited}: reported as that work's result, not checked"
            out.append(Violation("cited_number", str(occ.file), occ.number.line, occ.token, message, WARNING))
            continue
        out.append(Violation("unattested_number", str(occ.file), occ.number.line, occ.token, _unattested(rec, occ),
                             paths=_paths(rec, occ.file)))  # fmt: skip
    for binding in rec.stale:
        name = "typed by hand" if binding.manual else _name(binding.log, binding.at, base)
        message = f"was bound to {name}, but no such number stands there any more; `{_bind(rec)} --update` drops it"
        out.append(Violation("stale_binding", str(binding.file), binding.line, binding.token, message, WARNING,
                             _paths(rec)))  # fmt: skip
    out.sort(key=lambda v: (v.file, v.line, v.kind))
    return out
