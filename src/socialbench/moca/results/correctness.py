"""Per-instance correctness of every table cell (the input of the intervals and paired tests), read
from the predictions by the scorer's own functions and checked against the score files; and
:class:`RunSummary`, all the tables keep of one run's predictions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from socialbench.core.errors import DataError
from socialbench.moca.eval.scoring import (
    FIELDS,
    METRICS,
    check_predictions,
    field_matches,
    instance_valid_sets,
    is_invalid,
    score,
)
from socialbench.moca.results.answers import answer_counts
from socialbench.results.stability import answer_codes


def correctness(
    instances: list[dict[str, Any]],
    records: list[dict[str, Any]],
    labels: dict[str, list[str]],
    mechanisms: dict[str, list[str]],
    source: str = "predictions",
) -> dict[str, Any]:
    """{scenario: (N_s, 5) bool matrix}: c_{i,k} of label, subject, target, mechanism (the order of
    ``scoring.STATS``'s columns) and invalid, per instance in the instances' order, by the scorer's
    own functions and rules (``moca.scoring.score``); ``correctness_cells`` checks that their counts
    give the score file's numbers, so a scorer changed without this function is an error, not a
    silent difference."""
    import numpy as np

    by_id = check_predictions(instances, records, source)
    rows: dict[str, list[list[bool]]] = {}
    for gold in instances:
        s = gold["scenario"]
        valid = instance_valid_sets(gold, labels.get(s, []), mechanisms.get(s, []))
        pred = by_id.get(gold["id"])
        answer = None if pred is not None and pred.get("error") else pred  # as score(): a failed record is no answer
        c = field_matches(gold, answer, valid)
        rows.setdefault(s, []).append([c[k] for k in FIELDS] + [is_invalid(answer, valid)])
    return {s: np.array(r, dtype=bool).reshape(len(r), len(FIELDS) + 1) for s, r in sorted(rows.items())}


def resolved(record: dict[str, Any] | None) -> tuple[Any, ...] | None:
    """A run's resolved answer (the stability table compares them across orders): the four fields as
    scored (None: a record with an error)."""
    if record is None or record.get("error"):
        return None
    return tuple(record.get(f) for f in ("subject", "target", "mechanism", "label"))


@dataclass(frozen=True)
class RunSummary:
    """What the tables keep of one run's prediction records (``MocaBenchmark.run_summary``): a few
    bytes per instance, so the tables stage's memory does not grow with the number of runs."""

    source: str  # the predictions file, named by errors
    scores: dict[str, Any]  # the records scored again (``scoring.score``): checked against the score file
    cells: dict[str, Any]  # ``correctness``: {scenario: (N_s, 5) bool matrix}
    answers: dict[str, dict[str, int]]  # ``answers.answer_counts``: {scenario: counts}
    resolved: Any  # (N,) codes of the resolved answers (``results.stability.answer_codes``), instances' order


def run_summary(
    instances: list[dict[str, Any]], records: list[dict[str, Any]], labels, mechanisms, source: str
) -> RunSummary:
    """One run's records reduced to what Tables 2-7, their statistics, answers.csv and the stability
    table read of them; bad records are a DataError naming ``source`` (the scorer's checks)."""
    now = score(instances, records, labels, mechanisms, source=source)
    cells = correctness(instances, records, labels, mechanisms, source)
    by_id = {r.get("id"): r for r in records}
    codes = answer_codes(resolved(by_id.get(i["id"])) for i in instances)
    return RunSummary(source, now, cells, answer_counts(instances, records, labels, mechanisms), codes)


def correctness_cells(
    summaries: dict[tuple[str, str], RunSummary], scores: dict[tuple[str, str], dict[str, Any]]
) -> dict[tuple[str, str, str], Any]:
    """{(model, method, scenario): correctness matrix} for every pair of ``scores``, each checked
    against its score file: predictions that no longer give the file's numbers (scored before they
    changed, or on other instances) are a DataError naming the file, scenario and metric."""
    out = {}
    for (model, method), sc in sorted(scores.items()):
        if (model, method) not in summaries:
            raise DataError(f"{model}/{method}", "no predictions given for this score file (--predictions-dir)")
        run = summaries[(model, method)]
        now = run.scores
        for s in sorted(set(now) | set(sc)):
            for key in (*METRICS, "n"):
                was, got = (sc.get(s) or {}).get(key), (now.get(s) or {}).get(key)
                if was != got:
                    raise DataError(
                        run.source,
                        f"gives {key} = {got!r} but the score file of {model}/{method} says {was!r}:"
                        " the scores are stale or come from other instances (rerun socialbench score)",
                        record=f"scenario {s!r}",
                        field=key,
                    )
        for s, m in run.cells.items():
            out[(model, method, s)] = m
    return out
