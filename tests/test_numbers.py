"""Numbers of any size are attested or not like any other: no overflow, no trap, rounding at printed precision."""

from __future__ import annotations

from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_patchwrite.flows.transaction import try_patch
from pytest_patchwrite.gates.evidence import EvidenceConfig, EvidenceGate
from pytest_patchwrite.numbers.explog import EvidenceLog
from pytest_patchwrite.numbers.logread import load_logs
from pytest_patchwrite.numeric import NumberIndex, parse_number
from pytest_patchwrite.tex.latex import scan

PAPER = "% !patchwrite log = results.json\n\\documentclass{article}\n\\begin{document}\nx\n\\end{document}\n"


def _values(text: str) -> list[tuple[str, Decimal]]:
    return [(n.text, n.value) for n in scan(text).numbers]


def test_scientific_notation_keeps_its_printed_precision() -> None:
    found = dict(_values(r"mass $3.8 \times 10^{27}$ kg, flos 3.2e+20, tiny 1e-29697637\%, huge 2.5e1000000."))
    assert found[r"3.8 \times 10^{27}"] == Decimal("3.8e27")
    assert found[r"3.8 \times 10^{27}"].as_tuple().exponent == 26
    assert found["3.2e+20"] == Decimal("3.2e20")
    assert found[r"1e-29697637\%"] == Decimal("1e-29697637")
    assert found["2.5e1000000"] == Decimal("2.5e1000000")


def test_ml_log_values_attest_and_do_not_crash(tmp_path: Path) -> None:
    (tmp_path / "trainer_state.json").write_text(
        '{"total_flos": 3.2e+20, "seed": 123456789012345678901, "loss": 1e-400, "big": 1e400, "acc": 0.9144}'
    )
    (tmp_path / "cfg.toml").write_text("max = 1e308\nmin = 5e-324\nn = 123456789012345678901\n")
    log = load_logs(["trainer_state.json", "cfg.toml"], tmp_path)
    for printed in ("3.2e20", "123456789012345678901", "1e308", "1e-400", "1e400", "91.4", "0.914", "91.44"):
        assert log.attests(Decimal(printed)), printed
    for printed in ("3.3e20", "123456789012345678902", "2e308", "91.5", "9.14"):
        assert not log.attests(Decimal(printed)), printed


@pytest.mark.parametrize(
    "body",
    [r"Total compute was $3.8 \times 10^{27}$ FLOPs.", "A gap of 2.5e1000000 appeared.", r"Error 1e-29697637\%."],
)
def test_huge_and_tiny_numbers_in_an_edit_are_rejected_cleanly(tmp_path: Path, body: str) -> None:
    (tmp_path / "results.json").write_text('{"acc": 0.914}')
    paper = tmp_path / "main.tex"
    paper.write_text(PAPER)
    before = paper.read_bytes()
    result = try_patch(paper, f"EDIT 4 4\n{body}\n", [EvidenceGate(paper, EvidenceConfig())])
    assert not result.accepted and result.stage == "evidence"
    assert [v.kind for v in result.violations] == ["unattested_number"]
    assert paper.read_bytes() == before


def test_the_same_huge_numbers_are_accepted_when_the_log_holds_them(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text('{"flops": "3.8e27", "gap": "2.5e1000000", "err": "1e-29697637"}')
    paper = tmp_path / "main.tex"
    paper.write_text(PAPER)
    body = r"Compute $3.8 \times 10^{27}$, gap 2.5e1000000, error 1e-29697637\%."
    result = try_patch(paper, f"EDIT 4 4\n{body}\n", [EvidenceGate(paper, EvidenceConfig())])
    assert result.accepted, result.violations
    assert body in paper.read_text()


def test_ties_round_half_up_and_half_even() -> None:
    log = EvidenceLog()
    log.add("91.45")
    log.add("-2.5")
    assert log.attests(Decimal("91.5")) and log.attests(Decimal("91.4"))  # up; even
    assert log.attests(Decimal("-3")) and log.attests(Decimal("-2"))  # away from zero; even
    assert not log.attests(Decimal("91.6")) and not log.attests(Decimal("-4"))


def test_zero_is_attested_by_a_value_that_rounds_to_it() -> None:
    log = EvidenceLog()
    log.add("-0.004")
    assert log.attests(Decimal("0.00")) and log.attests(Decimal("-0.0"))
    assert not log.attests(Decimal("0.000"))


_BIG = Context(prec=4000, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[])


@given(
    digits=st.integers(min_value=1, max_value=10**30),
    exponent=st.integers(min_value=-(10**9), max_value=10**9),
    negative=st.booleans(),
    keep=st.integers(min_value=1, max_value=32),
    half_even=st.booleans(),
)
def test_a_value_attests_its_own_rounding_at_any_exponent(
    digits: int, exponent: int, negative: bool, keep: int, half_even: bool
) -> None:
    value = Decimal((int(negative), tuple(int(c) for c in str(digits)), exponent))
    quantum = Decimal((0, (1,), value.adjusted() - keep + 1))
    printed = value.quantize(quantum, ROUND_HALF_EVEN if half_even else ROUND_HALF_UP, _BIG)
    index = NumberIndex()
    index.add(value)
    assert index.rounds_to(printed)
    # two units of the printed precision away is never attested
    assert not index.rounds_to(_BIG.add(printed, _BIG.multiply(quantum, Decimal(2))))


@given(st.text(alphabet="0123456789.,eE+-\\%{}^ times$x", max_size=200))
def test_the_scanner_never_raises_on_number_like_text(text: str) -> None:
    for number in scan(text).numbers:
        assert number.value.is_finite()


@given(st.text(max_size=60))
def test_parse_number_returns_a_finite_value_or_none(text: str) -> None:
    value = parse_number(text)
    assert value is None or value.is_finite()


@given(
    values=st.lists(
        st.builds(
            lambda d, e, n: Decimal((int(n), tuple(int(c) for c in str(d)), e)),
            st.integers(min_value=0, max_value=10**20),
            st.integers(min_value=-320, max_value=320),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    ),
    pick=st.integers(min_value=0, max_value=5),
    keep=st.integers(min_value=1, max_value=18),
    offset=st.integers(min_value=-2, max_value=2),
    percent=st.booleans(),
)
def test_log_strings_and_exact_values_attest_alike(
    values: list[Decimal], pick: int, keep: int, offset: int, percent: bool
) -> None:
    # the fast path (strings ordered by float) and the exact path (Decimals) must agree everywhere
    from_strings, exact = NumberIndex(), NumberIndex()
    from_strings.add_tokens(str(v) for v in values)
    for v in values:
        exact.add(v)
    target = values[pick % len(values)]
    if percent:
        target = _BIG.multiply(target, Decimal(100))
    quantum = Decimal((0, (1,), target.adjusted() - keep + 1))
    printed = _BIG.add(target.quantize(quantum, ROUND_HALF_UP, _BIG), _BIG.multiply(quantum, Decimal(offset)))
    assert from_strings.rounds_to(printed) == exact.rounds_to(printed)
    if offset == 0 and (not percent or abs(values[pick % len(values)]) <= 1):
        assert from_strings.rounds_to(printed)


def test_remembered_answers_keep_the_printed_precision() -> None:
    index = NumberIndex()
    index.add_tokens(["91.43"])
    for _ in range(2):  # the second round is answered from memory
        assert index.rounds_to(Decimal("91.4"))
        assert not index.rounds_to(Decimal("91.40"))
        assert index.rounds_to(Decimal("91.43"))
    index.add_tokens(["91.40"])  # a new log value forgets the answers
    assert index.rounds_to(Decimal("91.40"))
