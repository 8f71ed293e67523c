"""MoCA scoring exactly as section 3.3 (pure functions, no I/O).

For each scenario, over the same N_s instances (an instance without a prediction counts as
all-incorrect): Acc per field, Dyad, Faith (None when no label is correct), Holis, plus
c_sem_dyad = Holis / Dyad (the paper's C_sem|dyad, None when Dyad is 0) and invalid_rate (instances
with any missing, unparsable or invalid field). Percentages with two decimals.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Iterable

FIELDS = ("label", "subject", "target", "mechanism")
METRICS = ("label", "subject", "target", "mechanism", "dyad", "faith", "holis", "c_sem_dyad", "invalid_rate")
_SEP = re.compile(r"[\s_\-]+")


def normalize(value: Any) -> str | None:
    """Lowercase; hyphens and underscores to spaces; repeated separators collapsed; ends trimmed."""
    if value is None:
        return None
    return _SEP.sub(" ", str(value).lower()).strip()


def percent(numerator: int, denominator: int) -> float | None:
    if denominator == 0:
        return None
    q = (Decimal(100) * numerator / Decimal(denominator)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return float(q)


def field_matches(gold: dict[str, Any], pred: dict[str, Any] | None, valid: dict[str, set[str]]) -> dict[str, bool]:
    """c_{i,k} for one instance. A scenario-invalid mechanism/label, or a subject/target outside the
    instance's options, is incorrect even if it happens to match after normalization."""
    out = {}
    for k in FIELDS:
        p = None if pred is None else normalize(pred.get(k))
        out[k] = p is not None and p in valid[k] and p == normalize(gold[k])
    return out


def instance_valid_sets(gold: dict[str, Any], labels: Iterable[str], mechanisms: Iterable[str]) -> dict[str, set[str]]:
    return {
        "label": {normalize(x) for x in labels},
        "mechanism": {normalize(x) for x in mechanisms},
        "subject": {normalize(x) for x in gold["subject_options"]},
        "target": {normalize(x) for x in gold["target_options"]},
    }


def is_invalid(pred: dict[str, Any] | None, valid: dict[str, set[str]]) -> bool:
    if pred is None:
        return True
    return any(normalize(pred.get(k)) not in valid[k] for k in FIELDS)


def score_scenario(rows: list[tuple[dict[str, bool], bool]]) -> dict[str, Any]:
    """rows: (c_{i,k} by field, invalid) for each of the N_s instances of one scenario."""
    n = len(rows)
    sums = {k: sum(c[k] for c, _ in rows) for k in FIELDS}
    dyad = sum(c["subject"] and c["target"] for c, _ in rows)
    faith_num = sum(c["label"] and c["mechanism"] for c, _ in rows)
    holis = sum(all(c[k] for k in FIELDS) for c, _ in rows)
    invalid = sum(inv for _, inv in rows)
    return {
        "label": percent(sums["label"], n),
        "subject": percent(sums["subject"], n),
        "target": percent(sums["target"], n),
        "mechanism": percent(sums["mechanism"], n),
        "dyad": percent(dyad, n),
        "faith": percent(faith_num, sums["label"]),
        "holis": percent(holis, n),
        "c_sem_dyad": percent(holis, dyad),
        "invalid_rate": percent(invalid, n),
        "n": n,
    }


def score(
    instances: list[dict[str, Any]],
    predictions: list[dict[str, Any]],
    labels: dict[str, list[str]],
    mechanisms: dict[str, list[str]],
) -> dict[str, dict[str, Any]]:
    """{scenario: metrics} over all instances; predictions are matched by ``id``."""
    by_id = {p["id"]: p for p in predictions}
    rows: dict[str, list[tuple[dict[str, bool], bool]]] = {}
    for gold in instances:
        s = gold["scenario"]
        valid = instance_valid_sets(gold, labels.get(s, []), mechanisms.get(s, []))
        pred = by_id.get(gold["id"])
        rows.setdefault(s, []).append((field_matches(gold, pred, valid), is_invalid(pred, valid)))
    return {s: score_scenario(rows[s]) for s in sorted(rows)}
