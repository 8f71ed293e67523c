"""MeetingToM's 95% intervals: ``socialbench.results.stats``' instance-level percentile bootstrap (B = 2000,
seeded per cell) on outcome columns rebuilt from the counts; Macro-F1 recomputed on the same resamples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from socialbench.core.errors import DataError
from socialbench.meetingtom.eval.scoring import F1_TASKS, Group
from socialbench.results.scores import is_flag, value
from socialbench.results.stability import answer_codes
from socialbench.results.stats import MetricSet, bootstrap_ci, cell_seed, percentile_interval, resample_counts

RESAMPLES = 2000
LEVEL = 0.95
#: Accuracy as the statistics compute it: one correctness column, its mean.
ACCURACY = MetricSet(columns=("correct",), metrics={"accuracy": ("correct", None)})
#: Task 3.2's conditional accuracy: correct over eligible (a correct paired 3.1), a ratio of sums.
CONDITIONAL = MetricSet(columns=("eligible", "correct"), metrics={"accuracy": ("correct", "eligible")})


def _outcomes(rows: Sequence[tuple[int, int]], n: int):
    """(n, columns) booleans: column k true for the first ``count`` instances of each ``(k, count)``."""
    import numpy as np

    out = np.zeros((n, len(rows)), dtype=bool)
    for k, count in rows:
        out[:count, k] = True
    return out


def _bootstrap(outcome, defs: MetricSet, seed: int, key: tuple[str, ...]) -> tuple[float | None, float | None]:
    ci = bootstrap_ci(outcome, defs=defs, n_resamples=RESAMPLES, seed=cell_seed(seed, *key), level=LEVEL)
    return ci.intervals["accuracy"].low, ci.intervals["accuracy"].high


def accuracy_ci(correct: int, n: int, seed: int, key: tuple[str, ...]) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of ``correct`` of ``n`` (stats.bootstrap_ci on the counts)."""
    if n == 0:  # nothing scored (Task 1 in a contextual-prior run): no interval
        return None, None
    return _bootstrap(_outcomes([(0, correct)], n), ACCURACY, seed, key)


def conditional_ci(
    correct: int, n: int, n_total: int, seed: int, key: tuple[str, ...]
) -> tuple[float | None, float | None]:
    """Task 3.2's interval: all ``n_total`` instances resampled, accuracy = correct / eligible per resample
    (resamples without an eligible instance left out); None when n = 0."""
    if n == 0:
        return None, None
    return _bootstrap(_outcomes([(0, n), (1, correct)], n_total), CONDITIONAL, seed, key)


def macro_f1_ci(
    gold: Sequence[Any], pred: Sequence[Any], seed: int, key: tuple[str, ...]
) -> tuple[float | None, float | None]:
    """Macro-F1's interval: Macro-F1 (as ``scoring.macro_f1``) recomputed on each resample of the instances."""
    import numpy as np

    classes = sorted(set(gold) | {p for p in pred if p is not None})
    t = np.array([[g == c for c in classes] for g in gold], dtype=np.float64)
    p = np.array([[q == c for c in classes] for q in pred], dtype=np.float64)
    w = resample_counts(len(gold), RESAMPLES, cell_seed(seed, *key))  # the draws of stats.bootstrap_ci
    tp, n_pred, n_true = w @ (t * p), w @ p, w @ t
    den = n_pred + n_true
    present = den > 0
    f1 = np.where(present, 2 * tp / np.where(present, den, 1), 0.0)
    values = 100 * f1.sum(axis=1) / present.sum(axis=1)
    low, high, _ = percentile_interval(values, LEVEL)
    return low, high


@dataclass(frozen=True)
class RunSummary:
    """What the tables keep of one run's outcome rows: a few bytes per instance (memory flat in runs)."""

    f1: dict[Group, tuple[list[Any], list[Any]]]  # {Macro-F1 group: (gold values, predicted values)}, instances' order
    evaluated: Any  # (N,) bool: the run's setting evaluates the instance (``Outcome.evaluated``)
    correct: Any  # (N,) bool: the predicted value is the gold one (``Outcome.correct``)
    answers: Any  # (N,) codes of the predicted values (``results.stability.answer_codes``)


def _is_group(v: Any) -> bool:
    try:
        Group.parse(v)
    except ValueError:
        return False
    return True


def run_summary(rows: list[dict[str, Any]], source: str) -> RunSummary:
    """One run's outcome rows reduced to what the tables read; a bad row is a DataError naming it."""
    import numpy as np

    f1: dict[Group, tuple[list[Any], list[Any]]] = {}
    for row in rows:
        group = Group.parse(value(row, "group", _is_group, "<task>/<source> of a known task", source))
        for key in ("evaluated", "correct"):
            value(row, key, is_flag, "true or false", source)
        value(row, "gold", lambda v: v is not None, "the gold value", source)
        value(row, "pred", lambda v: True, "the predicted value or null", source)
        if group.task in F1_TASKS:
            gold, pred = f1.setdefault(group, ([], []))
            gold.append(row["gold"])
            pred.append(row["pred"])
    return RunSummary(
        f1,
        np.array([row["evaluated"] for row in rows], dtype=bool),
        np.array([row["correct"] for row in rows], dtype=bool),
        answer_codes(row["pred"] for row in rows),
    )


def instance_values(
    summaries: Mapping[tuple[str, str], RunSummary], scores: Mapping[tuple[str, str], Any]
) -> dict[tuple[str, str, Group], tuple[list[Any], list[Any]]]:
    """{(model, method, group): (gold, predicted values)} of every Macro-F1 group; no outcomes: DataError."""
    out = {}
    for model, method in sorted(scores):
        if (model, method) not in summaries:
            raise DataError(f"{model}/{method}", "no outcomes given for this score file (--outcomes-dir)")
        out.update({(model, method, g): values for g, values in summaries[(model, method)].f1.items()})
    return out
