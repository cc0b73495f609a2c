"""The one LaTeX-aware scanner: comments, verbatim, command arguments, cite keys and numbers.

Every gate that reads LaTeX goes through `scan()`, which masks what TeX would not
typeset as prose (comments, verbatim, structural command arguments) and yields
cite keys and numeric tokens with their file and line (placeholders.py builds on it).
The lexical layer it stands on (masking, command arguments, ranges) is `texmask.py`; which branches of
TeX's conditionals are typeset is `texconditionals.py`; the manuscript's citation commands (its wrappers)
and definitions are `texcites.py`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal

from .sentences import boundaries, sentence_of
from .texcites import _MULTI_CITES, CITE_COMMANDS, cite_commands, defined, defining_macros
from .texconditionals import dead_branches
from .texmask import _CS, _inside, _merge, _per_text, command_args, mask, suppressions
from .texnumbers import (
    DOT_THOUSANDS,
    INTERVAL,
    UNIT_POWERS,
    dot_grouped,
    interval_ends,
    number_matches,
    quiet_ranges,
    range_percent,
    read_number,
    si_numbers,
    thin_minus,
)

# environments whose numbers are coordinates, styles or reference data, never results
NONPROSE_ENVS = ("tikzpicture", "pgfpicture", "axis", "picture", "thebibliography", "pspicture")

# command -> how many mandatory arguments are structural (-1: all that follow, up to 3)
STRUCTURAL_ARGS: dict[str, int] = {
    **dict.fromkeys(
        """label ref eqref pageref autoref cref Cref vref nameref cpageref hyperref url input include includeonly
        subfile subfileinclude bibliography bibliographystyle addbibresource usepackage RequirePackage documentclass
        includegraphics graphicspath bibitem date hypersetup geometry color pagecolor pagestyle thispagestyle
        pagenumbering linespread setstretch vspace vspace* hspace hspace* vskip hskip kern cline cmidrule label* end
        newcounter stepcounter refstepcounter numberwithin author affiliation affil address institute email
        IEEEauthorblockN IEEEauthorblockA IEEEoverridecommandlockouts orcid doi thanks acmConference acmYear
        acmISBN acmDOI acmPrice copyrightyear setcopyright received revised accepted keywords version""".split(),
        1,
    ),
    **dict.fromkeys("setlength addtolength setcounter addtocounter textcolor colorbox fontsize href".split(), 1),
    **dict.fromkeys("setlength addtolength setcounter addtocounter fontsize".split(), 2),
    **dict.fromkeys("definecolor".split(), 3),
    **dict.fromkeys("multicolumn multirow resizebox".split(), 2),
    **dict.fromkeys("scalebox rotatebox raisebox makebox framebox parbox rule".split(), 1),
    **dict.fromkeys(
        "newcommand renewcommand providecommand newenvironment renewenvironment DeclareMathOperator".split(), 1
    ),
    **dict.fromkeys("SI qty SIrange qtyrange SIlist qtylist".split(), 0),
}
# arguments of these come after the environment name: \begin{tabular}{lcc}
ENV_STRUCTURAL_ARGS = {"tabular": 1, "tabular*": 2, "tabularx": 2, "tabulary": 2, "array": 1, "minipage": 1,
                       "multicols": 1, "wrapfigure": 2, "wraptable": 2, "subfigure": 1, "subtable": 1,
                       "longtable": 1, "tblr": 1, "thebibliography": 1, "adjustbox": 1}  # fmt: skip
# unit arguments of siunitx: \SI{91.4}{\percent} (number then unit)
SIUNITX_UNIT_ARG = {"SI": 1, "qty": 1, "SIrange": 2, "qtyrange": 2, "SIlist": 1, "qtylist": 1}
# how many leading arguments of siunitx commands are numbers
SIUNITX_NUMBER_ARGS = {"num": 1, "tablenum": 1, "SI": 1, "qty": 1, "SIrange": 2, "qtyrange": 2, "numrange": 2,
                       "numlist": 1, "SIlist": 1, "qtylist": 1}  # fmt: skip
LENGTH_PARAMS = ("arraystretch", "baselinestretch", "tabcolsep", "textfraction", "topfraction", "bottomfraction",
                 "floatpagefraction", "dbltopfraction", "dblfloatpagefraction", "extrarowheight")  # fmt: skip

_CS_AFTER = re.compile(r"\s*\\([A-Za-z@]+)")


@dataclass(frozen=True)
class Citation:
    """One cite key at its source position."""

    key: str
    command: str
    file: str
    line: int


@dataclass(frozen=True)
class Number:
    """One numeric token as printed, with its value and printed precision."""

    text: str
    value: Decimal
    decimals: int
    percent: bool
    file: str
    line: int
    siunitx: bool = False
    start: int = -1  # offset of the token in its file's text (anchors and table cells of bindings)
    end: int = -1
    sentence: int = -1  # index of its sentence in the file (sentences.py); -1: not known
    unit: str = ""  # a unit or magnitude glued to it (`24.4M`: M, `0.19MB`: MB, `12.5ms`: ms); part of `text`
    scale: int = 0  # the power of ten that unit stands for (M: 6, MB: 6, ms: -3): the value is `value * 10**scale`
    grouped: bool = False  # printed with thousands separators (`10,578`, `10{,}578`, `10\,578`, `6.200` in Turkish)
    readings: tuple[Decimal, ...] = ()  # its values when the document's language leaves it ambiguous (6.2 or 6200)
    bindings_only: bool = False  # read for the bindings only: an interval in brackets after a command (`[0.1, 0.2]`)
    interval: str = ""  # `low` or `high`: which end of such an interval it is (`ci_low`, `brier_ci[1]`)
    macro: str = ""  # the macro whose definition holds it (`\\newcommand{\\llmfried}{$p = 0.60$}`): printed where used

    def pooled(self, policy: str) -> bool:
        """Return whether the pool rule checks this number under a number policy (`decimals`, `all`).

        A glued unit (`24.4M`) and an interval in brackets after a command (`{\\scriptsize [0.047, 0.133]}`,
        `\\in [0.33, 19.9]`) are read for the bindings only: the pool rule checks what it always checked."""
        plain = not self.unit and not self.bindings_only
        return plain and (policy == "all" or self.decimals > 0 or self.percent or self.siunitx)

    def reads_as(self) -> str:
        """Return what a finding says of a number its language leaves ambiguous (`it reads as 6.200 or 6200 ...; `)."""
        return (
            f"it reads as {' or '.join(map(str, self.readings))} in this document's language; " if self.readings else ""
        )


@dataclass
class Scan:
    """Everything `scan()` found in one source file."""

    file: str
    citations: list[Citation] = field(default_factory=list)
    numbers: list[Number] = field(default_factory=list)
    bibitems: list[tuple[str, int]] = field(default_factory=list)
    bibliographies: list[tuple[str, int]] = field(default_factory=list)
    suppressed: dict[int, set[str]] = field(default_factory=dict)
    cited_sentences: dict[int, list[str]] = field(default_factory=dict)  # sentence index -> keys cited in it

    def is_suppressed(self, line: int, what: str) -> bool:
        """Return whether `% patchwrite: ignore [what]` covers `line`."""
        scopes = self.suppressed.get(line)
        return scopes is not None and (not scopes or what in scopes)


@_per_text
def _structural_ranges(
    masked: str, cites: frozenset[str] = CITE_COMMANDS
) -> tuple[list[tuple[int, int]], list[tuple[int, int, bool]], list[tuple[int, int]]]:
    """Return (structural ranges, siunitx number arguments as (start, end, unit is percent), printed intervals) of
    a masked text.

    `cites`: its citation commands (their keys are structural). A printed interval is an option-like bracket after
    a command that holds only numbers (`{\\scriptsize [0.047, 0.133]}`, `$x \\in [0.33, 19.9]$`): TeX prints it, so
    the bindings read its numbers; it stays a structural range for every other reader (the pool rule never read it).
    """
    ranges: list[tuple[int, int]] = []
    siunitx: list[tuple[int, int, bool]] = []
    printed: list[tuple[int, int]] = []
    for m in _CS.finditer(masked):
        name = m.group(1)
        if not name[0].isalpha() and name != "\\":
            continue
        base = name.rstrip("*")
        if base == "begin":
            args = command_args(masked, m.end(), limit=4)
            if not args or args[0][0] != "{":
                continue
            env = masked[args[0][1] : args[0][2]].strip()
            ranges.append((args[0][1], args[0][2]))
            wanted = ENV_STRUCTURAL_ARGS.get(env, 0)
            seen = 0
            for kind, start, end in args[1:]:
                if kind == "{":
                    if seen >= wanted:
                        break
                    seen += 1
                ranges.append((start, end))
            if env in NONPROSE_ENVS:
                close = masked.find(f"\\end{{{env}}}", m.end())
                ranges.append((m.end(), close if close != -1 else len(masked)))
            continue
        if base in _DEFINERS_WITH_ARITY:
            ranges.extend(_arity(masked, m.end()))  # `[2]` of \newcommand{\foo}[2]{...}: no number of the paper
        if base in ("newcommand", "renewcommand", "providecommand", "def", "gdef", "edef", "xdef"):
            args = command_args(masked, m.end(), limit=2)
            if args and any(p in masked[args[0][1] : args[0][2]] for p in LENGTH_PARAMS):
                ranges.extend((s, e) for _, s, e in args)
                continue
            # \def\arraystretch{1.5}, \renewcommand\arraystretch{1.2}: the name is no group
            named = _CS_AFTER.match(masked, m.end())
            if named and named.group(1) in LENGTH_PARAMS:
                ranges.extend((s, e) for _, s, e in command_args(masked, named.end(), limit=1))
                continue
        if base in cites:
            args = command_args(masked, m.end(), limit=8 if _MULTI_CITES.match(base) else 1, angles=True)
            ranges.extend((s, e) for _, s, e in args)
            continue
        args = command_args(masked, m.end(), limit=4, parens=base == "cmidrule")
        if not args:
            continue
        wanted = STRUCTURAL_ARGS.get(name, STRUCTURAL_ARGS.get(base, 0))
        seen = 0
        si_args = len(siunitx)
        for kind, start, end in args:
            if kind != "{":
                ranges.append((start, end))  # options: [width=0.45\linewidth], [t], [2pt]
                if kind == "[" and base not in _DEFINERS and INTERVAL.fullmatch(masked, start, end):
                    printed.append((start, end))
                continue
            if seen < SIUNITX_NUMBER_ARGS.get(base, 0):
                siunitx.append((start, end, False))
            if base in SIUNITX_UNIT_ARG and seen == SIUNITX_UNIT_ARG[base]:
                ranges.append((start, end))
                if masked[start:end].strip() in ("\\percent", "\\%"):
                    siunitx[si_args:] = [(s, e, True) for s, e, _ in siunitx[si_args:]]
            elif seen < wanted:
                ranges.append((start, end))
            seen += 1
            if seen >= max(wanted, 1) and base not in SIUNITX_UNIT_ARG and base not in ("num", "numrange"):
                break
    ranges.extend((p.start(), p.end()) for p in _PARAMETER.finditer(masked))  # `#1` in a definition's body
    if printed:  # an interval inside another structural range (a label, a TikZ picture) prints nothing
        other = _merge(list(set(ranges) - set(printed)))
        printed = [p for p in printed if not _inside(other, [a for a, _ in other], p[0])]
    return _merge(ranges), siunitx, printed


_DEFINERS_WITH_ARITY = frozenset({"newcommand", "renewcommand", "providecommand", "DeclareRobustCommand",
                                  "newenvironment", "renewenvironment"})  # fmt: skip
_DEFINERS = _DEFINERS_WITH_ARITY | {"def", "gdef", "edef", "xdef", "NewDocumentCommand", "DeclareMathOperator"}
_PARAMETER = re.compile(r"#+[1-9]")


def _arity(masked: str, at: int) -> list[tuple[int, int]]:
    """Return the range of the argument count `[N]` after a definer's name (`{\\foo}`, `\\foo` or `{env}`)."""
    named = _CS_AFTER.match(masked, at)
    if named:
        after = named.end()
    else:
        name = command_args(masked, at, limit=1)
        if not name or name[0][0] != "{":
            return []
        after = name[0][2] + 1
    options = command_args(masked, after, limit=1)
    return [(start, end) for kind, start, end in options if kind == "["]


# commands that write the PDF's text layer apart from the glyphs (a ToUnicode remap, ActualText): the text a
# reader extracts may then spell `T0D0` where the page shows TODO
_TEXT_LAYER = re.compile(
    r"\\(?:pdfglyphtounicode|pdffontattr|BeginAccSupp|XeTeXgenerateactualtext|pdfliteral|pdfextension\s*literal)"
    r"(?![A-Za-z@])|/ToUnicode|/ActualText|\\special\s*\{\s*pdf:"
)


def text_layer_command(texts: Iterable[str]) -> str:
    """Return the first command in `texts` (outside comments) that sets the PDF's text apart from its glyphs, or ""."""
    for text in texts:
        if "\\" in text and (found := _TEXT_LAYER.search(mask(text)[0])):
            return found.group(0)
    return ""


def scan(
    text: str,
    file: str = "",
    false_ifs: frozenset[str] = frozenset(),
    cites: frozenset[str] | None = None,
    language: str = "",
) -> Scan:
    """Return the cite keys, numbers and bibliography declarations that one source file typesets.

    Branches TeX never typesets (`texconditionals.dead_branches`; `false_ifs` as there) hold none, and
    definitions hold no citation. `cites`: the manuscript's citation commands (`cite_commands` of all its
    files); the wrappers this text defines count either way. `language`: the manuscript's main language
    (`document_language`), which says how `6.200` reads.
    """
    masked, comments = mask(text)
    result = Scan(file)
    cites = cite_commands([text], cites if cites is not None else CITE_COMMANDS)
    line_starts = [0] + [m.end() for m in re.finditer("\n", masked)]
    dead = _merge(dead_branches(masked, false_ifs))
    dead_starts = [start for start, _ in dead]
    definitions = _merge([(d.start, d.end) for d in defined(masked)]) if "\\" in masked else []
    definition_starts = [start for start, _ in definitions]

    def typeset(pos: int) -> bool:
        return not dead or not _inside(dead, dead_starts, pos)

    def line_of(pos: int) -> int:
        return bisect.bisect_right(line_starts, pos)

    result.suppressed = suppressions(comments)
    ends = boundaries(masked)

    for m in _CS.finditer(masked):
        name = m.group(1)
        base = name.rstrip("*")
        if not typeset(m.start()):
            continue
        if base in cites:
            if definitions and _inside(definitions, definition_starts, m.start()):
                continue  # `\newcommand{\citeA}[1]{\cite{#1}}` cites nothing where it stands
            limit = 8 if _MULTI_CITES.match(base) else 1
            for kind, start, end in command_args(masked, m.end(), limit=limit, angles=True):
                if kind != "{":
                    continue
                for key in masked[start:end].split(","):
                    key = key.strip()
                    if key:
                        offset = start + masked[start:end].find(key)
                        result.citations.append(Citation(key, base, file, line_of(offset)))
                        if base != "nocite":  # \nocite prints nothing
                            result.cited_sentences.setdefault(sentence_of(ends, m.start()), []).append(key)
        elif base == "bibitem":
            args = [a for a in command_args(masked, m.end(), limit=1) if a[0] == "{"]
            if args:
                result.bibitems.append((masked[args[0][1] : args[0][2]].strip(), line_of(m.start())))
        elif base in ("bibliography", "addbibresource", "addglobalbib", "addsectionbib"):
            args = [a for a in command_args(masked, m.end(), limit=1) if a[0] == "{"]
            if args:
                for name_ in masked[args[0][1] : args[0][2]].split(","):
                    if name_.strip():
                        result.bibliographies.append((name_.strip(), line_of(m.start())))

    result.numbers = _numbers(masked, file, typeset, line_of, ends, cites, language)
    return result


def _numbers(
    masked: str,
    file: str,
    typeset: Callable[[int], bool],
    line_of: Callable[[int], int],
    ends: list[int],
    cites: frozenset[str] = CITE_COMMANDS,
    language: str = "",
) -> list[Number]:
    """Return the numbers a masked text prints, in text order (texnumbers.py: how each one reads).

    `ends`: where its sentences end (sentences.py), so each number knows its sentence; `language`: the
    document's main language (`document_language`), which says whether `.` groups thousands.
    """
    ranges, siunitx, printed = _structural_ranges(masked, cites)
    quiet = _merge(quiet_ranges(masked) + [(s, e) for s, e, _ in siunitx])
    skip = _merge(ranges + quiet)
    starts = [r[0] for r in skip]
    printed = [p for p in printed if not _inside(quiet, [a for a, _ in quiet], p[0])]  # not in a script: x^{[1,2]}
    printed_starts = [a for a, _ in printed]
    found: list[Number] = []
    dots, point, done = language in DOT_THOUSANDS, False, -1
    for m in number_matches(masked):
        pos = m.start("int")
        if pos < done or not typeset(pos):
            continue
        only = _inside(skip, starts, pos)  # an interval in brackets after a command: read for the bindings only
        if only and not (printed and _inside(printed, printed_starts, pos)):
            continue
        grouped = dot_grouped(masked, m) if dots else None
        read = read_number(masked, m, grouped)
        if read is None:
            continue
        text, value, decimals, unit, readings = read
        point = point or (grouped is None and m.group("frac") is not None)  # a `.` decimal this text prints
        done, begin = m.start() + len(text), m.start()
        if only and not m.group("sign") and thin_minus(masked, begin):  # [-0.0101,\,-0.0057]: a sign after `\,`
            text, value, begin = "-" + text, -value, begin - 1
        found.append(Number(text, value, decimals, bool(m.group("pct")), file, line_of(pos), False, begin, done,
                            sentence_of(ends, pos), unit, UNIT_POWERS.get(unit, 0),
                            grouped is not None or not m.group("int").isdigit(), readings, only))  # fmt: skip
    if dots:  # `6.200` reads as 6200 where the text prints no `.` decimal; else both readings stand
        found = [replace(n, value=n.readings[1], decimals=0, readings=()) if n.readings and not point else n
                 for n in found]  # fmt: skip
    structural_starts = [r[0] for r in ranges]
    for start, end, percent in siunitx:
        if _inside(ranges, structural_starts, start) or not typeset(start):
            continue
        for a, b, value, decimals in si_numbers(masked, start, end):
            found.append(
                Number(masked[a:b], value, decimals, percent, file, line_of(a), True, a, b, sentence_of(ends, a))
            )
    found.sort(key=lambda n: n.start)
    for i in range_percent(masked, [(n.start, n.end, n.percent) for n in found]):
        found[i] = replace(found[i], percent=True)
    sides = interval_ends(printed_starts, [(i, n.end) for i, n in enumerate(found) if n.bindings_only])
    macros = defining_macros(masked, [n.start for n in found])  # a number of a definition prints where it is used
    return [replace(n, interval=sides.get(i, ""), macro=macros[i]) if i in sides or macros[i] else n
            for i, n in enumerate(found)]  # fmt: skip


def key_lines(text: str, key: str) -> list[int]:
    """Return the lines where `key` stands as an argument item (`{key}`, `{a, key}`) outside comments and verbatim.

    Where a key the engine cited (`gates.record.bib_record`) sits in the source when no citation command the
    scanner knows cites it (a class macro, `\\shortcite` defined out of sight): its usual place, a braced list.
    """
    return [line for line, _command in key_places(text, key)]


_COMMAND_BEFORE = re.compile(r"\\([A-Za-z@]+)\*?\s*(?:\[[^\]]*\]\s*)*$")


def key_places(text: str, key: str) -> list[tuple[int, str]]:
    """Return (line, command) of each line where `key` stands as an argument item (`{key}`, `{a, key}`) outside
    comments and verbatim, in order, once per line; `command` is the macro whose braced argument holds its first
    place there (`citefrom` for `\\citefrom[p.~3]{a, key}`), "" when none stands right before the group."""
    masked = mask(text)[0]
    if key not in masked:
        return []
    pattern = re.compile(r"[{,]\s*" + re.escape(key) + r"\s*(?=[,}])")
    out: list[tuple[int, str]] = []
    for m in pattern.finditer(masked):
        line = masked.count("\n", 0, m.start()) + 1
        if out and out[-1][0] == line:
            continue
        brace = masked.rfind("{", 0, m.start() + 1)
        command = ""
        if brace >= 0 and "}" not in masked[brace : m.start()]:
            found = _COMMAND_BEFORE.search(masked, max(0, brace - 200), brace)
            command = found.group(1) if found else ""
        out.append((line, command))
    return out
