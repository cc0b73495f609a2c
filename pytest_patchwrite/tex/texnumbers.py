"""How the LaTeX scanner reads a printed number: its grammar, its value, and the spans that hold none.

Part of the one LaTeX scanner: only `latex.scan()` calls this module, on text that `texmask.mask()`
has already stripped of comments and verbatim (and the flows ask `document_language` what the
manuscript's language is, for `scan`). A printed number is one token however TeX spells
it: `7.0{\\times}10^{-3}`, `7.0 \\cdot 10^{-3}` and `\\num{7e-3}` are all 0.007 printed to 10^-4;
`42{,}930.5`, `42\\,930.5` and `42,930.5` are 42930.5, but a bare comma is punctuation in math
(`$1,234$` is the list 1, 234: TeX spaces it so), in a list (`1,234,5`) and in a pair (`(3,500)`).
Where the language groups thousands with `.` (Turkish, German, ...), `6.200` is 6200, unless the text
also prints `.` decimals: then both readings stand (`Number.readings`). A glued unit or magnitude
(`24.4M`, `0.19MB`, `3.2k`, `12.5ms`) is part of the number, with its power of ten; a model's size
(`a 7B model`, `Llama 7B`, `Qwen2.5-1.5B`) is a name, no number. What is no measurement holds no number:
URLs, DOIs, arXiv identifiers, and sub/superscripts (indices, exponents and the offsets of an
asymmetric interval, `91.4^{+0.3}_{-0.2}`, which are a bound minus the estimate: derived values that
a log holds only as the bound, so checking them would flag what is right; signed and unsigned alike).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from decimal import Decimal

from ..numeric import UNIT_SCALES, parse_number, shift
from .texcontrol import PARAMETER_WORDS, control_word, in_name, prints_minus
from .texgroups import match_group
from .texmask import _inside, mask

_SEP = r"(?:,|\{,\}|\\,|\{\\,\})"  # a thousands separator: 42,930  42{,}930  42\,930
_GAP = r"(?:\s|~|\\[,;:!]|\{\})*"
_TIMES = r"(?:\{\\times\}|\\times|\{\\cdot\}|\\cdot|\u00d7|\u00b7)"


def _number_pattern(sep: str) -> re.Pattern[str]:
    return re.compile(
        # a sign, unless the number ends a range (8--15) or continues a token
        r"(?P<sign>(?<![\w\d.,}\-])[-+\u2212])?"
        r"(?<![.\d])(?P<int>\d{1,3}(?:" + sep + r"\d{3})+(?!\d)|\d+)(?P<frac>\.\d+)?"
        r"(?:(?P<exp>[eE][-+]?\d+)"
        r"|" + _GAP + _TIMES + _GAP + r"10\s*\^\s*(?:\{\s*(?P<exp2>[-+\u2212]?\d+)\s*\}|(?P<exp3>[-+]?\d))"
        r"|(?<=(?<![\d.,])10)\s*\^\s*\{\s*(?P<pow>[-+\u2212]?\d+)\s*\})?"  # a bare power of ten: $10^{-3}$
        r"(?P<pct>\s*(?:(?:\\,|~)\s*)?\\%|\s*\\percent\b|%)?"
    )


NUMBER = _number_pattern(_SEP)
# the same grammar where a bare comma is punctuation (math, lists, pairs): only `{,}` and `\,` group digits
UNGROUPED = _number_pattern(r"(?:\{,\}|\\,|\{\\,\})")
_DOTTED_ON = re.compile(r"\.\d")
_UNIT_AFTER = re.compile(
    r"(?:\s*(?:pt|mm|cm)\b|(?:in|em|ex|bp|pc|dd|cc|sp|mu|px)\b|\s*\\(?:linewidth|textwidth|columnwidth|textheight|"
    r"paperwidth|paperheight|hsize|vsize|baselineskip|parindent|parskip|fill|stretch|unitlength|dimexpr))"
)
_REF_WORDS = re.compile(
    r"(?:\b(?:Sections?|Secs?\.|§|Tables?|Tabs?\.|Figures?|Figs?\.|Eqs?\.|Equations?|Chapters?|Ch\.|Appendix|"
    r"Appendices|Algorithms?|Alg\.|Theorems?|Thm\.|Lemmas?|Corollary|Definitions?|Def\.|Propositions?|Steps?|"
    r"Lines?|Parts?|Pages?|pp?\.|Rows?|Columns?|No\.|Nos\.|Listings?|Examples?|Exercises?|Rules?|Claims?|"
    r"Assumptions?|Remarks?|Hypothes[ie]s|Stages?|Phases?|Versions?|Vol\.|Volume|Issue)|§)(?:~|\s|\\ |\()*$",
    re.IGNORECASE,
)
_BETWEEN_WORD_AND_NUMBER = " \t\n\r\f\v~(\\,"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _after_word(before: str) -> bool:
    """Return whether a reference word or a month may end `before` (a cheap test; the regexes decide)."""
    last = before.rstrip(_BETWEEN_WORD_AND_NUMBER)[-1:]
    return last.isalpha() or last in ".§" or any(month in before for month in _MONTHS)


_MONTH_BEFORE = re.compile(
    r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?[~\s]*(?:\d{1,2},?\s*)?$"
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


# the whole of a bracket after a command that holds only numbers, which TeX prints: `{\scriptsize [0.047, 0.133]}`,
# `[0.2016,\,0.2098]`, `$x \in [0.33, 19.9]$` (an option holds a key, a length or a word: [t], [2pt], [width=...])
_ITEM = r"\s*\$?\s*[-+\u2212]?\s*\d+(?:\.\d+)?\s*(?:\\%|\\percent)?\s*\$?\s*"
INTERVAL = re.compile(_ITEM + r"(?:[,;](?:\\[,;:!]|~|\s)*" + _ITEM + r")+")
_THIN_MINUS = re.compile(r"\\[,;:!]\s*-$")
# a minus typeset apart from its number, right before it: `$-$42.1`, `${}-{}$42.1`, `\(-\)42.1`, `{-}42.1`,
# `\ensuremath{-}42.1`, `\textminus 42.1`; what stands right before it must be no operand (a digit, a letter, a
# closing bracket: `0{-}49`, `N{-}1`, `$2023$-$10$` are differences and ranges, not signs)
_DETACHED_MINUS = re.compile(
    r"(?<![\w})\].|])"
    r"(?:\$\s*(?:\{\})?\s*-\s*(?:\{\})?\s*\$|\\\(\s*-\s*\\\)|\{-\}|\\ensuremath\s*\{\s*-\s*\}|\\textminus(?![A-Za-z]))"
    r"(?:\s|~|\\[,;:!])*$"
)


def interval_ends(spans: list[int], numbers: list[tuple[int, int]]) -> dict[int, str]:
    """Return `low` and `high` for the two numbers of each bracketed interval (`spans`: where each starts; `numbers`:
    (index, end) of the numbers read in them, in order), by index; a bracket of more numbers is a list, no interval."""
    by_span: dict[int, list[int]] = {}
    for i, end in numbers:
        by_span.setdefault(bisect.bisect_right(spans, end) - 1, []).append(i)
    return {i: end for pair in by_span.values() if len(pair) == 2 for i, end in zip(pair, ("low", "high"), strict=True)}


def thin_minus(masked: str, start: int) -> bool:
    """Return whether the number at `start` follows a minus after a thin space (`\\,-0.0057`), its sign."""
    return masked[start - 1 : start] == "-" and bool(_THIN_MINUS.search(masked, max(0, start - 5), start))


# a unit or magnitude glued to a number: 24.4M, 3.2k, 0.19MB, 1.5B, 12.5ms (what no letter follows)
GLUED_UNIT = re.compile(r"(?P<unit>[kKMGT]B|[kKMBGT]|ms|us|\u00b5s|ns)(?![A-Za-z\d])")
#: the power of ten of each glued unit (a byte prefix as the magnitude's; a time as seconds')
UNIT_POWERS = {**UNIT_SCALES, "ms": -3, "us": -6, "\u00b5s": -6, "ns": -9}
# what makes `7B` or `1.5B` a model's name rather than a measured size: a name glued before (Qwen2.5-1.5B, LLaMA-7B),
# a name right before (Llama 7B, OPT (1.3B)), or a model noun after (a 7B model, the 7B and 13B variants)
_NAMED_BEFORE = re.compile(r"(?:[\w.][-_/]|\b[A-Za-z]*[A-Z][\w.]*[ ~]+\(?|\b[A-Za-z]+\d[\w.]*[ ~]+\(?)$")
_MODEL_AFTER = re.compile(
    r"(?:\s*(?:,|and|or|/|to|--|-)\s*\d+(?:\.\d+)?[MBT])*\)?(?:-|\s|~)*(?:-?param(?:eter)?s?\b[-\s~]*)?"
    r"(?:(?:MoE|dense|base|instruction-tuned|pretrained|pre-trained)\s+)?"
    r"(?:models?|LLMs?|LMs?|MoE\b|variants?|versions?|checkpoints?|backbones?|teachers?|students?|[Ii]nstruct|[Cc]hat|"
    r"[Bb]ase\b|scale\b|sizes?\b|-[A-Za-z])"
)
_COUNT_AFTER = re.compile(r"\s*(?:~|\\,)?\s*(?:tokens|param(?:eter)?s|words|samples|examples|images|documents|pairs|"
                          r"sentences|steps|FLOPs|bytes|rows|queries|hours)\b")  # fmt: skip


def glued_unit(masked: str, start: int, end: int) -> str | None:
    """Return the unit glued to the number at `start:end` of a masked text (`24.4M` -> M), None for none or for a
    model's name (`7B model`, `Llama 7B`, `Qwen2.5-1.5B`, which is no measurement)."""
    found = GLUED_UNIT.match(masked, end)
    if found is None:
        return None
    unit = found.group("unit")
    if unit in ("M", "B", "T") and not _COUNT_AFTER.match(masked, found.end()):
        if unit != "M" and "." not in masked[start:end]:
            return None  # a whole number of billions that counts nothing named: a model's size (to 70B, 32B MoE)
        if _NAMED_BEFORE.search(masked, max(0, start - 40), start) or _MODEL_AFTER.match(masked, found.end()):
            return None
    return unit


def split_commas(masked: str, m: re.Match[str], in_math: bool) -> bool:
    """Return whether a bare comma in a number's digits is punctuation rather than a thousands separator: in math
    (TeX sets `$1,234$` as the list 1, 234; a separator there is `{,}`), in a list (`1,234,5`), or as the whole
    of a pair in brackets (`(3,500)`)."""
    digits = m.group("int")
    if "," not in digits.replace("{,}", "").replace("\\,", ""):
        return False
    if in_math:
        return True
    before, after = masked[max(0, m.start() - 2) : m.start()], masked[m.end() : m.end() + 2]
    if re.match(r",\d", after) or re.search(r"\d,$", before):  # a tight list: 1,234,5 (not "0.5, 1,234")
        return True
    return before[-1:] in ("(", "[") and after[:1] in (")", "]")


_MATH = re.compile(r"(?<!\\)\$\$?|\\[()\[\]]|\\(?:begin|end)\{(?:equation|align|gather|multline|eqnarray|math|"
                   r"displaymath|flalign|alignat)\*?\}")  # fmt: skip


def math_ranges(masked: str) -> list[tuple[int, int]]:
    """Return the spans of a masked text that TeX reads in math mode (`$...$`, `\\(...\\)`, `\\[...\\]`, equation
    and align environments), in order."""
    ranges: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None
    for m in _MATH.finditer(masked):
        token = m.group(0)
        if opened is None:
            if token in ("$", "$$", "\\(", "\\[") or token.startswith("\\begin"):
                opened = (m.end(), token)
            continue
        start, opener = opened
        closes = token == opener if opener.startswith("$") else (
            token == {"\\(": "\\)", "\\[": "\\]"}.get(opener, opener.replace("begin", "end"))
        )  # fmt: skip
        if closes:
            ranges.append((start, m.start()))
            opened = None
    return ranges


def number_matches(masked: str) -> Iterator[re.Match[str]]:
    """Yield the `NUMBER` matches of a masked text, a comma that is punctuation (`split_commas`) splitting one into
    the numbers it separates."""
    math: list[tuple[int, int]] | None = None
    for m in NUMBER.finditer(masked):
        if "," in m.group("int"):
            math = math_ranges(masked) if math is None else math
            if split_commas(masked, m, _inside(math, [a for a, _ in math], m.start("int"))):
                yield from UNGROUPED.finditer(masked, m.start(), m.end())
                continue
        yield m


# languages whose numbers group thousands with `.` and mark decimals with `,` (babel's and polyglossia's names)
DOT_THOUSANDS = frozenset(
    """turkish german ngerman austrian naustrian swissgerman nswissgerman dutch flemish italian spanish catalan galician
    portuguese portuges brazil brazilian danish indonesian bahasa bahasai croatian serbian slovene slovenian romanian
    greek icelandic""".split()
)
_OTHER_LANGUAGES = frozenset(
    """english american british usenglish ukenglish australian canadian newzealand french francais russian polish
    czech slovak ukrainian finnish swedish norsk nynorsk estonian hungarian magyar hebrew arabic chinese japanese
    korean vietnamese hindi""".split()
)
_BABEL = re.compile(r"\\usepackage\s*\[(?P<options>[^\]]*)\]\s*\{[^}]*\bbabel\b[^}]*\}")
_CLASS = re.compile(r"\\documentclass\s*\[(?P<options>[^\]]*)\]")
_POLYGLOSSIA = re.compile(r"\\(?:setdefaultlanguage|setmainlanguage)\s*(?:\[[^\]]*\])?\s*\{\s*(?P<name>\w+)\s*\}")
_PROVIDE = re.compile(r"\\babelprovide\s*\[[^\]]*\bmain\b[^\]]*\]\s*\{\s*(?P<name>\w+)\s*\}")
# 6.200 or 6.200.000, and 6.200,5 (thousands, then a decimal comma)
_DOT_GROUPED = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?P<groups>(?:\.\d{3})+)(?![\d.])(?:(?:,|\{,\})(?P<frac>\d+))?")


def main_language(masked: str) -> str:
    """Return the main language a masked preamble sets (babel's last or `main=` option, polyglossia's default
    language, `\\babelprovide[main]`, a class option babel takes), lower-case; "" when it sets none."""
    for pattern in (_POLYGLOSSIA, _PROVIDE):
        if found := pattern.search(masked):
            return found.group("name").lower()
    for pattern in (_BABEL, _CLASS):
        for found in pattern.finditer(masked):
            options = [o.strip() for o in found.group("options").split(",") if o.strip()]
            main = [o.partition("=")[2].strip().lower() for o in options if o.startswith("main=")]
            names = [o.lower() for o in options if o.lower() in DOT_THOUSANDS | _OTHER_LANGUAGES]
            if main or names:
                return (main or names)[-1]
    return ""


def dot_grouped(masked: str, m: re.Match[str]) -> tuple[Decimal, int, bool, int] | None:
    """Return (value, fraction digits, ambiguous, end) of a number that groups thousands with `.` (`6.200` is 6200,
    `6.200.000`, `6.200,5` is 6200.5) as a language of `DOT_THOUSANDS` reads it; None when it is no such number.

    `ambiguous`: one group of three and no decimal comma, which the `.`-decimal reading (6.200) fits too."""
    if m.group("exp") or m.group("pow") or m.group("exp2") or m.group("exp3") or not m.group("frac"):
        return None
    found = _DOT_GROUPED.match(masked, m.start("int"))
    if found is None:
        return None
    frac = found.group("frac") or ""
    digits = re.sub(r"\D", "", masked[found.start() : found.start("groups") + len(found.group("groups"))])
    value = parse_number(f"{digits}.{frac}" if frac else digits)
    if value is None:
        return None
    if m.group("sign") in ("-", "\u2212"):
        value = value.copy_negate()
    return value, len(frac), not frac and found.group("groups").count(".") == 1, found.end()


def read_number(
    masked: str, m: re.Match[str], grouped: tuple[Decimal, int, bool, int] | None
) -> tuple[str, Decimal, int, str, tuple[Decimal, ...]] | None:
    """Return (text, value, fraction digits, glued unit, readings) of the number a `NUMBER` match prints, None when
    it is none (a name, an index, a reference, a length, a model's size).

    `grouped`: its reading with `.` as the thousands separator (`dot_grouped`), when the language has it;
    `readings`: both values when that reading and the `.`-decimal one fit (6.200)."""
    pos = m.start("int")
    if grouped is None and _DOTTED_ON.match(masked, m.end("frac") if m.group("frac") else m.end("int")):
        return None  # a version or address with two or more dots (LAPACK 3.4.0, 192.168.1.1) is one identifier
    before = masked[max(0, pos - 40) : pos]
    prev = masked[pos - 1] if pos else ""
    if (prev and prev in "^_") or before.endswith(("^{", "_{")) or in_name(before):
        return None  # an index or exponent, or a name: x_1, ResNet50
    word = control_word(before)
    if word in PARAMETER_WORDS or (word == "S" and not m.group("frac")):
        return None  # `\\penalty10000` prints nothing; `\\S3` is a section
    minus = bool(word) and not m.group("sign") and prints_minus(masked, "\\" + word)  # `\\newcommand{\\m}{-}`: \\m0.02
    minus = minus or (not m.group("sign") and bool(_DETACHED_MINUS.search(before)))  # `$-$42.1` prints -42.1
    if re.search(r"[A-Za-z]-$", before):
        return None  # GPT-4, ResNet-50, Top-5
    stop = grouped[3] if grouped is not None else m.end()
    after = masked[stop : stop + 24]
    unit = None if m.group("pct") or m.group("exp") else glued_unit(masked, m.start(), stop)
    if unit is None and re.match(r"[A-Za-z\u00b5]", after) and not m.group("pct") and not m.group("exp"):
        return None  # 3D, 2x, a 7B model
    if unit is None and _UNIT_AFTER.match(after) and not m.group("pct"):
        return None
    if _after_word(before) and (_REF_WORDS.search(before) or _MONTH_BEFORE.search(before)):
        return None
    parsed = number_value(m)
    if parsed is None:
        return None
    value, decimals = parsed
    text = (masked[m.start() : stop] if grouped is not None else m.group(0)).strip() + (unit or "")
    readings: tuple[Decimal, ...] = ()
    if minus:
        value = value.copy_negate()
    if grouped is not None and grouped[2]:
        readings = (value, grouped[0])  # 6.200: 6.2 printed to 10^-3, or 6200
    elif grouped is not None:
        value, decimals = grouped[0], grouped[1]
    return text, value, decimals, unit or "", readings


def document_language(texts: Iterable[str]) -> str:
    """Return the main language a manuscript's preamble sets (babel, polyglossia), lower-case; "" for none."""
    for text in texts:
        if "\\documentclass" in text or "language" in text or "babel" in text:
            if found := main_language(mask(text)[0]):
                return found
    return ""


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
