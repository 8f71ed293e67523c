"""The one rounding rule of every printed number: half-up to two decimals (``half_up``), and the exact
arithmetic on those numbers the tables print (``percent``, ``difference``, ``mean``).

So a tie (12.345) rounds the same way everywhere. An exact value (``Fraction``, ``Decimal``) is
rounded as it is; a float as it prints (its shortest repr), the value a reader sees. Pure functions."""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

Number = float | int | Fraction | Decimal


def _decimal(x: Number) -> Decimal:
    if isinstance(x, Fraction):
        # Decimal's division is correctly rounded to 28 digits: the same for any form of the fraction
        return Decimal(x.numerator) / Decimal(x.denominator)
    if isinstance(x, Decimal):
        return x
    return Decimal(repr(float(x)))


def half_up(x: Number, decimals: int = 2) -> float:
    """``x`` rounded half-up to ``decimals`` (12.345 -> 12.35, -0.125 -> -0.13)."""
    return float(_decimal(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def fixed(x: Number, decimals: int = 2, *, sign: bool = False) -> str:
    """``x`` as a table, a CSV or a figure's data writes it: rounded half-up (:func:`half_up`) and written
    with exactly ``decimals`` decimals, ``+`` before a positive one when ``sign`` (12.345 -> "12.35",
    -0.125 -> "-0.13"). The one way a reported number is written; a NaN or an infinity as Python writes it."""
    plus = "+" if sign else ""
    if isinstance(x, float) and not math.isfinite(x):
        return f"{x:{plus}.{decimals}f}"
    return f"{_decimal(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP):{plus}f}"


def percent(numerator: int, denominator: int, decimals: int = 2) -> float | None:
    """100 * numerator / denominator, exactly, rounded half-up; None when the denominator is 0."""
    return None if denominator == 0 else half_up(Fraction(100 * numerator, denominator), decimals)


def difference(a: Number | None, b: Number | None) -> float | None:
    """a - b rounded half-up: exact for exact values (a change from the unrounded scores), else of the
    printed two-decimal values (what a reader computes from the table); None when either is None."""
    if a is None or b is None:
        return None
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return half_up(a - b)
    return half_up(_decimal(a) - _decimal(b))


def mean(values: Iterable[Number | None]) -> float | None:
    """The mean of printed values, rounded half-up; None when one is None or none is given."""
    values = list(values)
    if not values or any(v is None for v in values):
        return None
    return half_up(sum((_decimal(v) for v in values), Decimal(0)) / len(values))
