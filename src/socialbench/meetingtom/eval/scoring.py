"""Scoring MeetingToM predictions (MeetingToM 4.1), pure: every (task, source) group has every metric of
:data:`METRICS`. ``accuracy`` is exact match; Task 3.2 (set equality) counts only where the run answered the
paired Task 3.1 instance right ("evaluated conditionally": ``n`` that count, ``n_total`` every instance).
``macro_f1`` (Tasks 1 and 3.1) is over option values, as scikit-learn's (``zero_division=0``); an invalid
answer is wrong, misses its gold class and adds none. Percentages are rounded half-up to two decimals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

from socialbench.core.errors import DataError
from socialbench.meetingtom.eval.parsing import normalize
from socialbench.meetingtom.schema.questions import MULTI, TASKS
from socialbench.results.numbers import half_up, percent

F1_TASKS = ("task1", "task3_1")
(MULTI_TASK,) = MULTI
PAIRED_TASK = "task3_1"  # Task 3.2 counts where this task's answer on the same clip is correct
METRICS = ("accuracy", "chance", "correct", "invalid", "invalid_rate", "n", "n_total", "macro_f1")


class Group(NamedTuple):
    """A score group: one task on one source. Its string form ``<task>/<source>`` is what score files, the
    headline and the bootstrap seeds hold (:meth:`parse` reads it); groups sort as their string forms do."""

    task: str
    source: str

    def __str__(self) -> str:
        return f"{self.task}/{self.source}"

    @classmethod
    def parse(cls, key: str) -> Group:
        """The group of string form ``key``; a ValueError naming it unless ``<task>/<source>`` of a known task."""
        task, sep, source = key.partition("/") if isinstance(key, str) else ("", "", "")
        if not sep or task not in TASKS or not source or "/" in source:
            raise ValueError(f"group {key!r}: a group is <task>/<source> with a task of {', '.join(TASKS)}")
        return cls(task, source)


def group_of(instance: dict[str, Any]) -> Group:
    return Group(instance["task"], instance["source"])


def chance(option_counts: Sequence[int], multi: bool = False) -> Fraction:
    """Expected accuracy of uniform guessing: the mean of 1 / k for k options (``multi``: 1 / (2^k - 1))."""
    return sum((Fraction(1, 2**k - 1 if multi else k) for k in option_counts), Fraction(0)) / len(option_counts)


def macro_f1(y_true: Sequence[Any], y_pred: Sequence[Any]) -> Fraction:
    """Exact Macro-F1 of gold and predicted values (None: invalid, a miss that adds no class) over the classes
    gold or validly predicted: the unweighted mean of 2 TP / (2 TP + FP + FN)."""
    if len(y_true) != len(y_pred) or not y_true:
        raise ValueError(f"macro_f1 needs equally long non-empty sequences, got {len(y_true)} and {len(y_pred)}")
    classes = sorted(set(y_true) | {p for p in y_pred if p is not None})
    total = Fraction(0)
    for c in classes:
        tp = sum(1 for t, p in zip(y_true, y_pred) if t == c and p == c)
        fp = sum(1 for t, p in zip(y_true, y_pred) if t != c and p == c)
        fn = sum(1 for t, p in zip(y_true, y_pred) if t == c and p != c)
        total += Fraction(2 * tp, 2 * tp + fp + fn)  # 2tp+fp+fn > 0: c is gold or predicted somewhere
    return total / len(classes)


@dataclass(frozen=True)
class Outcome:
    """One instance scored: gold and predicted values (``pred`` None when invalid), whether it is right, counts
    (``eligible``: Task 3.2 after a right Task 3.1) and is evaluated at all (not Task 1 with priors)."""

    id: str
    group: Group
    gold: Any
    pred: Any
    correct: bool
    eligible: bool
    n_options: int
    evaluated: bool = True


def option_value(option: dict[str, Any]) -> str:
    # Task 2.1's older records name the participant only; its value is that letter (spec).
    return option.get("value") or option.get("participant") or option["label"]


def _check_predictions(
    instances: list[dict[str, Any]],
    predictions: list[dict[str, Any]],
    source: str,
    lines: Sequence[int] | None,
    instances_source: str,
) -> dict[str, dict[str, Any]]:
    by_inst = {i["id"]: i for i in instances}
    by_id: dict[str, dict[str, Any]] = {}
    for k, p in enumerate(predictions):
        where = f"line {lines[k]}" if lines else f"record {k + 1}"
        pid = p.get("id")
        if not isinstance(pid, str):
            raise DataError(source, "prediction without an id", record=where, field="id")
        if pid in by_id:
            raise DataError(source, "duplicate prediction for this id", record=f"{pid} ({where})", field="id")
        if pid not in by_inst:
            raise DataError(source, f"names no instance of {instances_source}", record=f"{pid} ({where})", field="id")
        answer = p.get("answer")
        multi = by_inst[pid]["task"] == MULTI_TASK
        typed = (
            isinstance(answer, list) and all(isinstance(a, str) for a in answer) if multi else isinstance(answer, str)
        )
        if answer is not None and not typed:
            want = "a list of option labels" if multi else "an option label (a string)"
            why = f"must be {want} or null, got {answer!r}"
            raise DataError(source, why, record=f"{pid} ({where})", field="answer")
        by_id[pid] = p
    return by_id


def _gold(inst: dict[str, Any], values: dict[str, str], instances_source: str) -> Any:
    gold = inst.get("answer")
    labels = gold if inst["task"] == MULTI_TASK and isinstance(gold, list) else [gold]
    if inst["task"] == MULTI_TASK and not isinstance(gold, list) or not labels or any(g not in values for g in labels):
        why = f"gold answer {gold!r} names no option (options {sorted(values)})"
        raise DataError(instances_source, why, record=inst["id"], field="answer")
    return tuple(sorted({values[g] for g in labels})) if inst["task"] == MULTI_TASK else values[gold]


def _predicted(inst: dict[str, Any], pred: dict[str, Any] | None, values: dict[str, str]) -> Any:
    """The predicted value(s), None when invalid, by the parser's own rule (``parsing.normalize``)."""
    if pred is None or pred.get("error") or pred.get("answer") is None:
        return None  # as MoCA's scorer: a record with an error is no answer
    answer, problem = normalize(pred["answer"], list(values), multi=inst["task"] == MULTI_TASK)
    if problem is not None:
        return None
    if inst["task"] == MULTI_TASK:
        return tuple(sorted(values[a] for a in answer))
    return values[answer]


def outcomes(
    instances: list[dict[str, Any]],
    predictions: list[dict[str, Any]],
    *,
    source: str,
    lines: Sequence[int] | None = None,
    instances_source: str = "instances",
) -> list[Outcome]:
    """Each instance scored, in order. A prediction without an id, with a duplicate or unknown id or an answer
    of the wrong type, or a Task 3.2 instance without its Task 3.1 one, is a DataError naming file and record."""
    by_id = _check_predictions(instances, predictions, source, lines, instances_source)
    first: list[tuple[dict[str, Any], Any, Any]] = []
    for inst in instances:
        values = {o["label"]: option_value(o) for o in inst["options"]}
        first.append((inst, _gold(inst, values, instances_source), _predicted(inst, by_id.get(inst["id"]), values)))
    paired = {
        (inst["source"], inst.get("clip_id")): gold == pred for inst, gold, pred in first if inst["task"] == PAIRED_TASK
    }
    out = []
    for inst, gold, pred in first:
        n_options, multi, key = len(inst["options"]), inst["task"] == MULTI_TASK, (inst["source"], inst.get("clip_id"))
        if (by_id.get(inst["id"]) or {}).get("not_evaluated"):  # the run's setting leaves it out (Task 1, priors)
            out.append(Outcome(inst["id"], group_of(inst), gold, None, False, False, n_options, evaluated=False))
            continue
        if multi and key not in paired:
            clip = f"its clip ({key[1]!r}, source {key[0]!r})"
            why = (
                f"a {MULTI_TASK} instance without a {PAIRED_TASK} instance of {clip}: it cannot be scored conditionally"
            )
            raise DataError(instances_source, why, record=inst["id"], field="clip_id")
        correct = pred is not None and pred == gold
        out.append(Outcome(inst["id"], group_of(inst), gold, pred, correct, paired[key] if multi else True, n_options))
    return out


def outcome_row(o: Outcome) -> dict[str, Any]:
    """An :func:`outcomes` item as a row of the outcomes file ``socialbench score`` writes and the tables read."""
    return dict(id=o.id, group=str(o.group), evaluated=o.evaluated, correct=o.correct, gold=o.gold, pred=o.pred)


def score_outcomes(scored: list[Outcome]) -> dict[Group, dict[str, Any]]:
    """The metrics of each group of ``scored`` (module docstring), by group."""
    groups: dict[Group, list[Outcome]] = {}
    for o in scored:
        groups.setdefault(o.group, []).append(o)
    out = {}
    for g, group in sorted(groups.items()):
        evaluated = [o for o in group if o.evaluated]
        n = sum(o.eligible for o in group)
        correct = sum(o.correct for o in group if o.eligible)
        invalid = sum(o.pred is None for o in evaluated)
        f1 = (
            macro_f1([o.gold for o in evaluated], [o.pred for o in evaluated])
            if g.task in F1_TASKS and evaluated
            else None
        )
        out[g] = {
            "accuracy": percent(correct, n),
            "chance": half_up(100 * chance([o.n_options for o in group], multi=g.task == MULTI_TASK)),
            "correct": correct,
            "invalid": invalid,
            "invalid_rate": percent(invalid, len(group)),
            "n": n,
            "n_total": len(group),
            "macro_f1": None if f1 is None else half_up(100 * f1),
        }
    return out


def keyed_by_string(scores: dict[Group, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Scores as score files hold them: by the groups' string forms."""
    return {str(g): m for g, m in scores.items()}


def keyed_by_group(scores: dict[str, dict[str, Any]]) -> dict[Group, dict[str, Any]]:
    """Scores read from a score file (checked: :func:`parse_scores`), by group."""
    return {Group.parse(g): m for g, m in scores.items()}


def score(instances: list[dict[str, Any]], predictions: list[dict[str, Any]], **kw: Any) -> dict[str, dict]:
    """:func:`outcomes` scored per group as score files hold them (by ``<task>/<source>``)."""
    return keyed_by_string(score_outcomes(outcomes(instances, predictions, **kw)))


def _whole(v: Any, low: int, high: int) -> bool:
    return not isinstance(v, bool) and isinstance(v, int) and low <= v <= high


def _pct(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float)) and 0 <= v <= 100


def parse_scores(data: bytes, source: str) -> dict[str, dict[str, Any]]:
    """A score file read back and checked: every group has every metric, counts whole and consistent,
    percentages in [0, 100], ``accuracy`` and ``macro_f1`` null exactly where undefined."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DataError(source, f"not a JSON score file ({exc})") from None
    if not isinstance(obj, dict) or not obj:
        raise DataError(source, "must be a non-empty object {group: metrics}")
    for g, m in obj.items():
        rec = f"group {g!r}"
        try:
            task = Group.parse(g).task
        except ValueError:
            why = f"a group is <task>/<source> with a task of {', '.join(TASKS)}"
            raise DataError(source, why, record=rec) from None
        if not isinstance(m, dict):
            raise DataError(source, f"must be an object of metrics, got {m!r}", record=rec)
        missing = [k for k in METRICS if k not in m]
        if missing:
            raise DataError(source, f"missing metric(s) {', '.join(missing)}", record=rec)
        n_total, n = m["n_total"], m["n"]
        if not _whole(n_total, 1, 10**12):
            raise DataError(source, f"must be a whole number >= 1, got {n_total!r}", record=rec, field="n_total")
        # n < n_total: Task 3.2's conditional scoring, or instances the run does not evaluate
        if not _whole(n, 0, n_total):
            why = f"must be a whole number in [0, {n_total}] (n_total), got {n!r}"
            raise DataError(source, why, record=rec, field="n")
        for k, top in (("correct", n), ("invalid", n_total)):
            if not _whole(m[k], 0, top):
                raise DataError(source, f"must be a whole number in [0, {top}], got {m[k]!r}", record=rec, field=k)
        for k in ("chance", "invalid_rate"):
            if not _pct(m[k]):
                raise DataError(source, f"must be a percentage in [0, 100], got {m[k]!r}", record=rec, field=k)
        no_f1 = task not in F1_TASKS
        for k, undefined, why in (
            ("accuracy", n == 0, "n = 0"),
            ("macro_f1", no_f1 or n == 0, f"{task} has no Macro-F1" if no_f1 else "n = 0"),
        ):
            v = m[k]
            if undefined and v is not None:
                raise DataError(source, f"must be null ({why}), got {v!r}", record=rec, field=k)
            if not undefined and not _pct(v):
                raise DataError(source, f"must be a percentage in [0, 100], got {v!r}", record=rec, field=k)
    return obj
