"""MeetingToM's scoring (MeetingToM 4.1) as stage hooks (core ``EvalHooks``); keywords as core declares them."""

from __future__ import annotations

from typing import Any

from socialbench.core.benchmarks import EvalHooks
from socialbench.meetingtom.eval.scoring import (
    keyed_by_string,
    outcome_row,
    outcomes,
    parse_scores,
    score,
    score_outcomes,
)


class MeetingToMEval(EvalHooks):
    def score(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        return score(instances, predictions, **kw)

    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        return parse_scores(data, source)

    def score_with_outcomes(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]], **kw: Any):
        """Per instance, whether it is evaluated and right, with its values; the scores and the rows from one
        pass of ``scoring.outcomes``."""
        scored = outcomes(instances, predictions, **kw)
        return keyed_by_string(score_outcomes(scored)), [outcome_row(o) for o in scored]


HOOKS = MeetingToMEval
