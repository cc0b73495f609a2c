"""Versions, addresses and layout factors are never empirical numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import LOG, found, paper

from pytest_patchwrite.tex.latex import scan


@pytest.mark.parametrize(
    "text",
    ["LAPACK 3.4.0", "Python 2.7.18", "host 192.168.1.1", "on 2019.12.31", "v 10.0.19041.1"],
)
def test_a_dotted_number_with_two_or_more_dots_is_one_identifier(text: str) -> None:
    assert scan(f"We used {text} here.").numbers == []


@pytest.mark.parametrize(
    "text",
    [
        "{\\def\\arraystretch{1.5} x}",
        "\\renewcommand\\arraystretch{1.3}",
        "\\renewcommand*{\\arraystretch}{1.35}",
        "\\renewcommand{\\arraystretch}{1.2}",
        "\\def\\baselinestretch{1.25}",
        "\\gdef\\arraystretch{1.1}",
        "\\setstretch{1.1}",
    ],
)
def test_layout_factors_in_the_body_are_never_checked(text: str) -> None:
    assert scan(text).numbers == []


def test_decimals_next_to_them_still_count() -> None:
    found_numbers = [n.text for n in scan("LAPACK 3.4.0 gave 91.4 and 3.4. Then 2.5.\n\\setstretch{1.1} 7.25").numbers]
    assert found_numbers == ["91.4", "3.4", "2.5", "7.25"]


def test_the_number_lock_passes_versions_and_layout(tmp_path: Path) -> None:
    body = "LAPACK 3.4.0 at 192.168.1.1.\n{\\def\\arraystretch{1.5}\\setstretch{1.1} x}\nAccuracy 99.9."
    assert found(paper(tmp_path, body, log=LOG)) == [("unattested_number", 6, "99.9")]
