"""Per-instance correctness of every table cell (for the intervals and paired tests), from each run's
outcomes (``moca.eval.outcomes``); and :class:`RunSummary`, all the tables keep of one run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from socialbench.core.errors import DataError
from socialbench.moca.eval.outcomes import ANSWER_FIELDS, FORMAT_FLAGS
from socialbench.moca.eval.scoring import FIELDS
from socialbench.moca.results.answers import answer_counts
from socialbench.results.scores import is_flag, value
from socialbench.results.stability import answer_codes


@dataclass(frozen=True)
class RunSummary:
    """What the tables keep of one run's outcome rows: a few bytes per instance."""

    cells: dict[str, Any]  # {scenario: (N_s, 5) bool matrix}: c_{i,k} of FIELDS and invalid, instances' order
    answers: dict[str, dict[str, int]]  # ``answers.answer_counts``: {scenario: counts}
    resolved: Any  # (N,) codes of the resolved answers (``results.stability.answer_codes``), instances' order


def _is_answer(v: Any) -> bool:
    return v is None or isinstance(v, list) and len(v) == len(ANSWER_FIELDS)


def checked_rows(rows: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """``rows`` when every one holds what the summary reads; else a DataError naming ``source``."""
    for row in rows:
        for k in FIELDS:
            value(row, f"correct.{k}", is_flag, "true or false", source)
        value(row, "invalid", is_flag, "true or false", source)
        value(row, "answer", _is_answer, f"null or a list of {len(ANSWER_FIELDS)} values", source)
        for k in FORMAT_FLAGS:
            value(row, f"format.{k}", is_flag, "true or false", source)
    return rows


def run_summary(rows: list[dict[str, Any]], source: str) -> RunSummary:
    """One run's outcome rows reduced to correctness matrices, answer counts and answer codes."""
    import numpy as np

    checked_rows(rows, source)
    by_scenario: dict[str, list[list[bool]]] = {}
    for row in rows:
        by_scenario.setdefault(row["group"], []).append([row["correct"][k] for k in FIELDS] + [row["invalid"]])
    cells = {s: np.array(r, dtype=bool).reshape(len(r), len(FIELDS) + 1) for s, r in sorted(by_scenario.items())}
    codes = answer_codes(row["answer"] for row in rows)
    return RunSummary(cells, answer_counts(rows), codes)


def correctness_cells(
    summaries: dict[tuple[str, str], RunSummary], scores: dict[tuple[str, str], dict[str, Any]]
) -> dict[tuple[str, str, str], Any]:
    """{(model, method, scenario): correctness matrix}; a pair without a summary is a DataError."""
    out = {}
    for model, method in sorted(scores):
        if (model, method) not in summaries:
            raise DataError(f"{model}/{method}", "no outcomes given for this score file (--outcomes-dir)")
        for s, m in summaries[(model, method)].cells.items():
            out[(model, method, s)] = m
    return out
