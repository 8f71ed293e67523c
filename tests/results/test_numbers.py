"""socialbench.results.numbers: the one rounding rule (half-up to two decimals) and the arithmetic on
printed values."""

import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from socialbench.results.numbers import difference, fixed, half_up, mean, percent


def test_a_tie_rounds_up_away_from_zero():
    assert (half_up(Fraction(12345, 1000)), half_up(Fraction(-125, 1000))) == (12.35, -0.13)


def test_a_float_is_rounded_as_it_prints_not_as_its_binary_value():
    # 1.005 is 1.00499999999999989... in binary: Python's round() gives 1.0, the printed value is a tie
    assert round(1.005, 2) == 1.0 and half_up(1.005) == 1.01


def test_a_decimal_is_rounded_as_it_is():
    assert half_up(Decimal("2.675"), 2) == 2.68 and half_up(Decimal("2.675"), 1) == 2.7


def test_percent_is_exact_and_none_without_a_denominator():
    assert percent(1, 8) == 12.5 and percent(2, 3) == 66.67 and percent(1, 0) is None


def test_a_difference_of_exact_values_is_not_the_difference_of_their_roundings():
    # 2/3 - 1/3 = 33.333...: 33.33, where the printed 66.67 - 33.33 gives 33.34
    assert difference(Fraction(200, 3), Fraction(100, 3)) == 33.33
    assert difference(66.67, 33.33) == 33.34


def test_a_difference_with_a_missing_value_is_missing():
    assert difference(None, 1.0) is None and difference(1.0, None) is None


def test_a_mean_of_printed_values_rounds_its_tie_up_and_needs_every_value():
    assert mean([50.01, 50.0]) == 50.01  # 50.005: a tie
    assert mean([1.0, None]) is None and mean([]) is None


def test_a_number_is_written_rounded_half_up_with_exactly_its_decimals():
    # f"{2.675:.2f}" writes 2.67 (the binary value); the printed value is a tie, written 2.68
    assert (f"{2.675:.2f}", fixed(2.675)) == ("2.67", "2.68")
    assert (fixed(-0.125), fixed(Fraction(1, 8) * 100), fixed(3, 2), fixed(1.005, 1)) == (
        "-0.13",
        "12.50",
        "3.00",
        "1.0",
    )


def test_a_signed_number_is_written_with_its_sign():
    assert (fixed(3.125, sign=True), fixed(-3.125, sign=True), fixed(0, sign=True)) == ("+3.13", "-3.13", "+0.00")


@pytest.mark.parametrize("x", [float("nan"), float("inf")])
def test_a_number_that_is_no_value_is_written_as_python_writes_it(x):
    assert fixed(x) == f"{x:.2f}"


SRC = Path(__file__).resolve().parents[2] / "src" / "socialbench"
#: Where reported numbers are written: the tables, scores, figures' data, stats and run summaries.
REPORTING = [
    *SRC.glob("results/*.py"),
    *SRC.glob("*/results/*.py"),
    *SRC.glob("*/benchmark.py"),
    *SRC.glob("*/eval/*.py"),
    *SRC.glob("*/methods/*.py"),
    SRC / "moca" / "dataset" / "dataset_stats.py",
    SRC / "meetingtom" / "dataset" / "ami" / "you_events.py",
]
#: Numbers in these lines are no reported result: times in messages, prompts and the viewer, indices.
NOT_REPORTED = (
    "MiB, more than",  # results/book.py: a file's size in an error
    "has held the tracking server's lock for",  # results/tracking.py: a wait in an error
    'f"t={ts:.2f} s"',  # moca/results/viewer.py: a frame's time stamp
    "[{t['start']:.2f}-{t['end']:.2f}]",  # meetingtom/eval/prompts.py: a transcript's times in a prompt
    'f"{p.timestamp:.2f}s"',  # moca/eval/prompts.py: frame times in a prompt
    "items[round(i * (len(items) - 1) / (k - 1))]",  # moca/eval/prompts.py: evenly spread indices
    "picks = sorted({round(i * (n - 1) / (k - 1))",  # results/viewer_media.py: evenly spread indices
    "revision round(s)",  # moca/methods/codar.py: words
    "Math.round(performance.now())",  # results/viewer_page.py: the page's own load time, in JavaScript
    "round(rate * 10_000)",  # moca/eval/testing.py: the test double's error rate
)


def test_no_reported_number_is_formatted_or_rounded_outside_the_one_rule():
    pattern = re.compile(r":[+ ]?\.\d+f\}|(?<![\w.])round\(")
    found = [
        f"{path.relative_to(SRC)}: {line.strip()}"
        for path in REPORTING
        if path.name != "numbers.py"
        for line in path.read_text().splitlines()
        if pattern.search(line) and not any(allowed in line for allowed in NOT_REPORTED)
    ]
    assert found == []
