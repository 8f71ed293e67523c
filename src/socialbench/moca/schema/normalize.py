"""How MoCA compares answer strings and prints percentages: shared by data building (schema, annotation,
dataset statistics) and evaluation (parsing, scoring), so neither has to import the other."""

from __future__ import annotations

import re
from typing import Any

from socialbench.results.numbers import percent as _percent

_SEP = re.compile(r"[\s_\-]+")


def normalize(value: Any) -> str | None:
    """Lowercase; hyphens and underscores to spaces; repeated separators collapsed; ends trimmed."""
    if value is None:
        return None
    return _SEP.sub(" ", str(value).lower()).strip()


def percent(numerator: int, denominator: int) -> float | None:
    """100 * numerator / denominator, two decimals half-up; None when the denominator is 0."""
    return _percent(numerator, denominator)
