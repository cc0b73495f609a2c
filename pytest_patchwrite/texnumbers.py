"""How the LaTeX scanner reads a printed number: its grammar, its value, and the spans that hold none.

Part of the one LaTeX scanner: only `latex.scan()` calls this module, on text that `texmask.mask()`
has already stripped of comments and verbatim. A printed number is one token however TeX spells
it: `7.0{\\times}10^{-3}`, `7.0 \\cdot 10^{-3}` and `\\num{7e-3}` are all 0.007 printed to 10^-4;
`42{,}930.5`, `42\\,930.5` and `42,930.5` are 42930.5. What is no measurement holds no number:
URLs, DOIs, arXiv identifiers, and sub/superscripts (indices, exponents and the offsets of an
asymmetric interval, `91.4^{+0.3}_{-0.2}`, which are a bound minus the estimate: derived values that
a log holds only as the bound, so checking them would flag what is right; signed and unsigned alike).
"""

from __future__ import annotations

import re
from decimal import Decimal

from .numeric import parse_number, shift
from .texgroups import match_group

_SEP = r"(?:,|\{,\}|\\,|\{\\,\})"  # a thousands separator: 42,930  42{,}930  42\,930
_GAP = r"(?:\s|~|\\[,;:!]|\{\})*"
_TIMES = r"(?:\{\\times\}|\\times|\{\\cdot\}|\\cdot|\u00d7|\u00b7)"
NUMBER = re.compile(
    # a sign, unless the number ends a range (8--15) or continues a token
    r"(?P<sign>(?<![\w\d.,}\-])[-+\u2212])?"
    r"(?<![.\d])(?P<int>\d{1,3}(?:" + _SEP + r"\d{3})+(?!\d)|\d+)(?P<frac>\.\d+)?"
    r"(?:(?P<exp>[eE][-+]?\d+)"
    r"|" + _GAP + _TIMES + _GAP + r"10\s*\^\s*(?:\{\s*(?P<exp2>[-+\u2212]?\d+)\s*\}|(?P<exp3>[-+]?\d))"
    r"|(?<=(?<![\d.,])10)\s*\^\s*\{\s*(?P<pow>[-+\u2212]?\d+)\s*\})?"  # a bare power of ten: $10^{-3}$
    r"(?P<pct>\s*(?:(?:\\,|~)\s*)?\\%|\s*\\percent\b|%)?"
)
# a letter (or _) right before the digits makes them part of a name (ResNet50, x_1), unless it ends a
# control word that prints no sign: TeX ends `\pm` at the digit, so `\pm42{,}930.5` prints 42930.5;
# after a macro of the paper's own (`\newcommand{\m}{-}` then `\m0.02`) the printed sign is unknown
_CONTROL_WORD = re.compile(
    r"\\(?:pm|mp|approx|sim|simeq|cong|equiv|propto|leq?|geq?|leqslant|geqslant|ll|gg|lt|gt|neq?|times|cdot|div|ast"
    r"|quad|qquad|enspace|thinspace|medspace|thickspace|to|rightarrow|leftarrow|Rightarrow|mapsto|colon|mid|vert"
    r"|hline|toprule|midrule|bottomrule|item|par|noindent|newline|linebreak|hfill|centering)$"
)
# URLs, DOIs and arXiv identifiers: `\url` and `\href` are structural; these are the bare ones
_IDENTIFIER = re.compile(
    r"(?:\b(?:https?|ftp)://|\bwww\.)(?:[^\s{}\\]|\\[^A-Za-z\s])+"
    r"|\b(?:doi:\s*)?10\.\d{4,9}/(?:[^\s{}\\]|\\[^A-Za-z\s])+"
    r"|\barXiv:\s*\d{4}\.\d{4,5}(?:v\d+)?",
    re.IGNORECASE,
)
_SCRIPT = re.compile(r"(?<!\\)[\^_]\s*")
# between the two ends of a range whose second end is a percentage: 8--15\%, $8$--$15\%$
_RANGE_DASH = re.compile(r"\s*\$?\s*(?:--|-|\u2013|\\textendash(?:\{\})?)\s*\$?\s*")
# siunitx input: spaces and \, group digits, `.` and `,` are decimal markers, e/d exponents, +- and \pm
_SI_GAP = r"(?:\s|~|\\,|\\ |\{\})"
_SI_NUMBER = re.compile(
    r"(?P<sign>\+-|\\pm|\\mp|[-+\u2212])?" + _SI_GAP + r"*"
    r"(?P<int>\d(?:\d|" + _SI_GAP + r"+(?=\d))*)?"
    r"(?:[.,](?P<frac>\d(?:\d|" + _SI_GAP + r"+(?=\d))*))?"
    r"(?:" + _SI_GAP + r"*[eEdD]" + _SI_GAP + r"*(?P<exp>[-+\u2212]?\d+))?"
)


def _minus(text: str) -> str:
    return text.replace("\u2212", "-").replace(" ", "")


def number_value(m: re.Match[str]) -> tuple[Decimal, int] | None:
    """Return a `NUMBER` match's exact value (its exponent is the printed precision) and its fraction digits."""
    if m.group("pow") is not None:
        value = shift(Decimal(1), int(_minus(m.group("pow"))))
        return (value, 0) if value is not None else None
    digits = re.sub(r"\D", "", m.group("int"))
    frac = m.group("frac") or ""
    value = parse_number(digits + frac)
    if value is None:
        return None
    exp = m.group("exp") or ""
    power = m.group("exp2") or m.group("exp3")
    if power is not None:
        exp = "e" + _minus(power)
    if exp:
        ten = parse_number("1" + exp)
        value = shift(value, int(ten.as_tuple().exponent)) if ten is not None else None
        if value is None:
            return None
    if m.group("sign") in ("-", "\u2212"):
        value = value.copy_negate()
    return value, len(frac) - 1 if frac else 0


def in_name(before: str) -> bool:
    """Return whether digits after `before` continue a name (ResNet50) rather than follow a control word (\\pm42)."""
    last = before[-1:]
    letter = last == "_" or (last.isalnum() and not last.isdecimal())  # what [^\W\d] matches, without a search
    return letter and not _CONTROL_WORD.search(before)


def quiet_ranges(masked: str) -> list[tuple[int, int]]:
    """Return the spans of a masked text whose digits are no printed measurement: identifiers and scripts."""
    found = [m.span() for m in _IDENTIFIER.finditer(masked)]
    for m in _SCRIPT.finditer(masked):
        j = m.end()
        if j < len(masked) and masked[j] == "{":
            if (end := match_group(masked, j, "{", "}")) != -1:  # an unclosed `^{` covers nothing
                found.append((j + 1, end - 1))
        else:
            found.append((j, j + 1))  # one token: x^2, y_1
    return found


def si_numbers(masked: str, start: int, end: int) -> list[tuple[int, int, Decimal, int]]:
    """Return the numbers of a siunitx argument as (start, end, value, fraction digits), read as siunitx reads them.

    Spaces and `\\,` group digits (`\\num{12 345}`), a comma is a decimal marker like the point
    (siunitx's default `input-decimal-markers`), `e`/`d` mark the exponent; the uncertainty of
    `1.5 +- 0.2` is a number of its own, the compact `1.23(4)` is not.
    """
    found: list[tuple[int, int, Decimal, int]] = []
    for m in _SI_NUMBER.finditer(masked, start, end):
        if m.group("int") is None and m.group("frac") is None:
            continue
        if masked[max(start, m.start() - 1) : m.start()] == "(":
            continue  # 1.23(4): digits of the uncertainty in the last place
        digits = re.sub(r"\D", "", m.group("int") or "0")
        frac = re.sub(r"\D", "", m.group("frac") or "")
        value = parse_number(f"{digits}.{frac}" if frac else digits)
        if value is not None and m.group("exp"):
            value = shift(value, int(_minus(m.group("exp"))))
        if value is None:
            continue
        if m.group("sign") in ("-", "\u2212"):
            value = value.copy_negate()
        token_start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
        found.append((token_start, m.start() + len(m.group(0).rstrip()), value, len(frac)))
    return found


def range_percent(masked: str, ends: list[tuple[int, int, bool]]) -> list[int]:
    """Return the indices of numbers that open a range whose other end is a percentage (8--15\\% is 8% to 15%).

    `ends`: each number's (start, end, percent), in text order.
    """
    opened: list[int] = []
    for i in range(len(ends) - 1):
        _, end, percent = ends[i]
        following, _, next_percent = ends[i + 1]
        if next_percent and not percent and _RANGE_DASH.fullmatch(masked, end, following):
            opened.append(i)
    return opened
