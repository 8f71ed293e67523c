"""socialbench.results.numbers: the one rounding rule (half-up to two decimals) and the arithmetic on
printed values."""

from decimal import Decimal
from fractions import Fraction

from socialbench.results.numbers import difference, half_up, mean, percent


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
