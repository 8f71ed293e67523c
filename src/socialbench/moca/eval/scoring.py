"""MoCA scoring exactly as section 3.3 (pure): per scenario, over the same N_s instances (no prediction:
all incorrect), Acc per field, Dyad, Faith, Holis, c_sem_dyad and invalid_rate as percentages with two
decimals, with ``n`` and ``media_errors``. Bad input raises ``DataError`` naming file, record and field."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.io import is_number, parse_json_object  # noqa: F401  (score files are read through here)
from socialbench.moca.schema.normalize import normalize, percent
from socialbench.results.stats import MetricSet

FIELDS = ("label", "subject", "target", "mechanism")
METRICS = ("label", "subject", "target", "mechanism", "dyad", "faith", "holis", "c_sem_dyad", "invalid_rate")
#: The same metrics for the statistics (``socialbench.results.stats``), from per-instance correctness.
STATS = MetricSet(
    columns=FIELDS,
    derived={
        "dyad": ("subject", "target"),
        "label_mech": ("label", "mechanism"),
        "holis": ("label", "subject", "target", "mechanism"),
    },
    metrics={
        **{k: (k, None) for k in (*FIELDS, "dyad")},
        "faith": ("label_mech", "label"),
        "holis": ("holis", None),
        "c_sem_dyad": ("holis", "dyad"),
    },
)
# Metrics with a denominator other than N_s, so null (0/0) is a legitimate value; the others never are.
NULLABLE_METRICS = ("faith", "c_sem_dyad")
#: Counts beside the percentages: N_s, and how many of the N_s had media that failed at evaluation time.
COUNTS = ("n", "media_errors")


def field_matches(gold: dict[str, Any], pred: dict[str, Any] | None, valid: dict[str, set[str]]) -> dict[str, bool]:
    """c_{i,k} for one instance: a value outside ``valid`` is incorrect even if it matches the gold."""
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


def media_failed(gold: dict[str, Any], pred: dict[str, Any] | None) -> bool:
    """Whether the instance's media failed at evaluation time (marked by the media stage or the method)."""
    return bool(gold.get("media_error") or (pred is not None and pred.get("media_error")))


def score_scenario(rows: list[tuple[dict[str, bool], bool]], media_errors: int = 0) -> dict[str, Any]:
    """One scenario's metrics from (c_{i,k} by field, invalid) of its N_s instances and its media errors."""
    n = len(rows)
    sums = {k: sum(c[k] for c, _ in rows) for k in FIELDS}
    dyad = sum(c["subject"] and c["target"] for c, _ in rows)
    faith_num = sum(c["label"] and c["mechanism"] for c, _ in rows)
    holis = sum(all(c[k] for k in FIELDS) for c, _ in rows)
    invalid = sum(inv for _, inv in rows)
    return {
        **{k: percent(sums[k], n) for k in FIELDS},
        "dyad": percent(dyad, n),
        "faith": percent(faith_num, sums["label"]),
        "holis": percent(holis, n),
        "c_sem_dyad": percent(holis, dyad),
        "invalid_rate": percent(invalid, n),
        "n": n,
        "media_errors": media_errors,
    }


def _where(k: int, lines: Sequence[int] | None) -> str:
    return f"line {lines[k] if lines is not None else k + 1}"


def check_predictions(
    instances: list[dict[str, Any]],
    predictions: list[dict[str, Any]],
    source: str = "predictions",
    lines: Sequence[int] | None = None,
    instances_source: str = "the instances",
) -> dict[str, dict[str, Any]]:
    """Predictions by ``id``: each id non-empty, naming one instance, once (``lines``: their file lines)."""
    instance_ids = {g["id"] for g in instances}
    by_id: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for k, pred in enumerate(predictions):
        where = _where(k, lines)
        if "id" not in pred:
            raise DataError(source, "missing (every prediction needs the id of its instance)", record=where, field="id")
        iid = pred["id"]
        if not isinstance(iid, str) or not iid:
            raise DataError(source, f"must be a non-empty string, got {iid!r}", record=where, field="id")
        if iid in first:
            why = f"duplicate id {iid!r} (first at {_where(first[iid], lines)})"
            raise DataError(source, why, record=where, field="id")
        if iid not in instance_ids:
            raise DataError(source, f"id {iid!r} matches no instance in {instances_source}", record=where, field="id")
        if pred.get("error") is not None and not (isinstance(pred["error"], str) and pred["error"]):
            why = f"must be null or why the record failed (a message), got {pred['error']!r}"
            raise DataError(source, why, record=where, field="error")
        first[iid] = k
        by_id[iid] = pred
    return by_id


def score(instances: list[dict], predictions: list[dict], labels: dict, mechanisms: dict, **where: Any) -> dict:
    """{scenario: metrics} over all instances (:func:`matched`; ``where``: the file names for errors)."""
    return scenario_scores(matched(instances, predictions, labels, mechanisms, **where))


def scenario_scores(matched_rows: list[tuple[dict, dict | None, dict[str, bool], bool]]) -> dict:
    """{scenario: metrics} of :func:`matched`'s rows."""
    rows: dict[str, list[tuple[dict[str, bool], bool]]] = {}
    media: dict[str, int] = {}
    for gold, pred, matches, invalid in matched_rows:
        s = gold["scenario"]
        rows.setdefault(s, []).append((matches, invalid))
        media[s] = media.get(s, 0) + media_failed(gold, pred)
    return {s: score_scenario(rows[s], media[s]) for s in sorted(rows)}


def matched(
    instances: list[dict[str, Any]],
    predictions: list[dict[str, Any]],
    labels: dict[str, list[str]],
    mechanisms: dict[str, list[str]],
    source: str = "predictions",
    lines: Sequence[int] | None = None,
    instances_source: str = "the instances",
) -> list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, bool], bool]]:
    """Per instance: (gold, record or None, c_{i,k} per field, invalid); an error record is no answer."""
    by_id = check_predictions(instances, predictions, source, lines, instances_source)
    out = []
    for gold in instances:
        s = gold["scenario"]
        valid = instance_valid_sets(gold, labels.get(s, []), mechanisms.get(s, []))
        pred = by_id.get(gold["id"])
        answer = None if pred is not None and pred.get("error") else pred
        out.append((gold, pred, field_matches(gold, answer, valid), is_invalid(answer, valid)))
    return out


def check_scores(scores: Any, source: str) -> dict[str, dict[str, Any]]:
    """A score file's content as ``score`` writes it, checked; a ``DataError`` names scenario and field."""
    if not isinstance(scores, dict):
        raise DataError(source, f"must be a JSON object {{scenario: metrics}}, got {type(scores).__name__}")
    if not scores:
        raise DataError(source, "no scenarios (an empty score object)")
    for scenario, metrics in scores.items():
        rec = f"scenario {scenario!r}"
        if not isinstance(metrics, dict):
            raise DataError(source, f"must be an object of metrics, got {metrics!r}", record=rec)
        for key in (*METRICS, *COUNTS):
            if key not in metrics:
                raise DataError(source, "missing", record=rec, field=key)
        unknown = sorted(set(metrics) - {*METRICS, *COUNTS})
        if unknown:
            why = f"unknown metric (known: {', '.join((*METRICS, *COUNTS))})"
            raise DataError(source, why, record=rec, field=unknown[0])
        n = metrics["n"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            why = f"must be a positive integer (the number of instances), got {n!r}"
            raise DataError(source, why, record=rec, field="n")
        m = metrics["media_errors"]
        if not isinstance(m, int) or isinstance(m, bool) or not 0 <= m <= n:
            why = f"must be an integer from 0 to n ({n}): the instances whose media failed, got {m!r}"
            raise DataError(source, why, record=rec, field="media_errors")
        for key in METRICS:
            v = metrics[key]
            if v is None and key in NULLABLE_METRICS:
                continue
            if not is_number(v) or not 0 <= v <= 100:
                allowed = "a percentage in [0, 100]" + (" or null" if key in NULLABLE_METRICS else "")
                raise DataError(source, f"must be {allowed}, got {v!r}", record=rec, field=key)
    return scores


def parse_scores(data: bytes, source: str) -> dict[str, dict[str, Any]]:
    """The checked content of a score file from its bytes (UTF-8 JSON); see ``check_scores``."""
    return check_scores(parse_json_object(data, source, "{scenario: metrics}"), source)
