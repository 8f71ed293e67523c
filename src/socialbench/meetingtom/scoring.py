"""Scoring MeetingToM predictions (MeetingToM 4.1): exact-match accuracy per task and source, with
the chance baseline under uniform guessing from the option counts. Pure functions.

A score file is ``{"<task>/<source>": {accuracy, chance, correct, invalid, invalid_rate, n}}`` with
one group per (task, source) that has instances (``task2_1/demo``, ``task2_1/ami``); percentages
rounded half-up to two decimals. An instance without a prediction is incorrect and invalid.
"""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any, Sequence

from socialbench.errors import DataError

METRICS = ("accuracy", "chance", "correct", "invalid", "invalid_rate", "n")


def percent(value: Fraction) -> float:
    d = Decimal(value.numerator * 100) / Decimal(value.denominator)
    return float(d.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def group_of(instance: dict[str, Any]) -> str:
    return f"{instance['task']}/{instance['source']}"


def chance(option_counts: Sequence[int]) -> Fraction:
    """Expected accuracy of uniform guessing: the mean over instances of 1 / (number of options)."""
    return sum((Fraction(1, k) for k in option_counts), Fraction(0)) / len(option_counts)


def score(instances: list[dict[str, Any]], predictions: list[dict[str, Any]], *, source: str,
          lines: Sequence[int] | None = None, instances_source: str = "instances") -> dict[str, dict[str, Any]]:
    """Scores per group; a prediction without an id, with a duplicate id or with an id that names
    no instance is a DataError naming the file and line."""
    known = {i["id"] for i in instances}
    by_id: dict[str, dict[str, Any]] = {}
    for k, p in enumerate(predictions):
        where = f"line {lines[k]}" if lines else f"record {k + 1}"
        pid = p.get("id")
        if not isinstance(pid, str):
            raise DataError(source, "prediction without an id", record=where, field="id")
        if pid in by_id:
            raise DataError(source, "duplicate prediction for this id", record=f"{pid} ({where})", field="id")
        if pid not in known:
            raise DataError(source, f"names no instance of {instances_source}", record=f"{pid} ({where})", field="id")
        by_id[pid] = p
    groups: dict[str, list[dict[str, Any]]] = {}
    for inst in instances:
        groups.setdefault(group_of(inst), []).append(inst)
    out = {}
    for g, insts in sorted(groups.items()):
        correct = invalid = 0
        for inst in insts:
            pred = by_id.get(inst["id"])
            answer = pred.get("answer") if pred else None
            if answer is None or (pred or {}).get("error"):
                invalid += 1
            if answer is not None and answer == inst["answer"]:
                correct += 1
        n = len(insts)
        out[g] = {"accuracy": percent(Fraction(correct, n)), "chance": percent(chance([len(i["options"]) for i in insts])),
                  "correct": correct, "invalid": invalid, "invalid_rate": percent(Fraction(invalid, n)), "n": n}  # fmt: skip
    return out


def parse_scores(data: bytes, source: str) -> dict[str, dict[str, Any]]:
    """A score file read back and checked: every group has every metric, counts are whole numbers
    within ``n``, percentages lie in [0, 100]."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DataError(source, f"not a JSON score file ({exc})") from None
    if not isinstance(obj, dict) or not obj:
        raise DataError(source, "must be a non-empty object {group: metrics}")
    for g, m in obj.items():
        if not isinstance(m, dict):
            raise DataError(source, f"must be an object of metrics, got {m!r}", record=f"group {g!r}")
        missing = [k for k in METRICS if k not in m]
        if missing:
            raise DataError(source, f"missing metric(s) {', '.join(missing)}", record=f"group {g!r}")
        n = m["n"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise DataError(source, f"must be a whole number >= 1, got {n!r}", record=f"group {g!r}", field="n")
        for k in ("correct", "invalid"):
            v = m[k]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= n:
                raise DataError(source, f"must be a whole number in [0, {n}], got {v!r}", record=f"group {g!r}", field=k)
        for k in ("accuracy", "chance", "invalid_rate"):
            v = m[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 100:
                raise DataError(source, f"must be a percentage in [0, 100], got {v!r}", record=f"group {g!r}", field=k)
    return obj
