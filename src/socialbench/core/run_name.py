"""A run's name, typed: ``<method>[__<ablation>][__order<k>]``: a method, optionally one of its ablations
(params ``ablations``), optionally asked again in option order k (params ``robustness``; order 0 has no
suffix). Params, file names, request ids and MLflow use it; :class:`RunName` reads and writes it."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

SEP = "__"
#: The part naming an order run's option order (``order<k>``, k >= 1); no ablation may look like it.
ORDER_PREFIX = "order"
ORDER_NAME = re.compile(rf"^{ORDER_PREFIX}[0-9]+$")
_ORDER_PART = re.compile(rf"^{ORDER_PREFIX}(?P<k>[1-9][0-9]*)$")
_FORM = f"<method>[{SEP}<ablation>][{SEP}{ORDER_PREFIX}<k>]"


@dataclass(frozen=True, order=True)
class RunName:
    """``method``, ``ablation`` (or None) and ``order`` (0: the run itself); ``str()`` gives the name back."""

    method: str
    ablation: str | None = None
    order: int = 0

    def __post_init__(self) -> None:
        problem = _problem(self.method, self.ablation, self.order)
        if problem:
            raise ValueError(
                f"run name parts (method={self.method!r}, ablation={self.ablation!r}, order={self.order!r}): {problem}"
            )

    @classmethod
    def parse(cls, name: str) -> RunName:
        """The parts of ``name``; a ValueError naming it when it is no run name."""
        if not isinstance(name, str):
            raise ValueError(f"run name {name!r}: not a string (a run name is {_FORM})")
        parts = name.split(SEP)
        order = 0
        if len(parts) > 1 and ORDER_NAME.match(parts[-1]):
            m = _ORDER_PART.match(parts[-1])
            if m is None:
                raise ValueError(
                    f"run name {name!r}: {parts[-1]!r} is no option order ({ORDER_PREFIX}<k> counts from 1,"
                    f" without leading zeros; order 0 is the run itself, named without it)"
                )
            order = int(m["k"])
            parts = parts[:-1]
        method, ablation = parts[0], (SEP.join(parts[1:]) if len(parts) > 1 else None)
        problem = _problem(method, ablation, order)
        if problem:
            raise ValueError(f"run name {name!r}: {problem}")
        return cls(method, ablation, order)

    def __str__(self) -> str:
        name = self.method if self.ablation is None else f"{self.method}{SEP}{self.ablation}"
        return name if self.order == 0 else f"{name}{SEP}{ORDER_PREFIX}{self.order}"

    @property
    def run(self) -> RunName:
        """The run an order run reorders (itself when none)."""
        return replace(self, order=0) if self.order else self

    def with_order(self, k: int) -> RunName:
        """This run under option order ``k`` (0: the run itself)."""
        return replace(self, order=k)


def _problem(method: object, ablation: object, order: object) -> str:
    """Why these parts make no run name, or "" (pure)."""
    if not isinstance(method, str) or not method:
        return f"the method part is empty (a run name is {_FORM})"
    if SEP in method:
        return f"the method part holds {SEP!r} (a run name is {_FORM})"
    if ablation is not None:
        if not isinstance(ablation, str) or not ablation or any(not p for p in ablation.split(SEP)):
            return f"the ablation part is empty (a run name is {_FORM})"
        if any(ORDER_NAME.match(p) for p in ablation.split(SEP)):
            return f"{ORDER_PREFIX}<k> names an option order, not an ablation; it comes last (a run name is {_FORM})"
    if not isinstance(order, int) or isinstance(order, bool) or order < 0:
        return f"an option order is a whole number from 0, got {order!r}"
    return ""
