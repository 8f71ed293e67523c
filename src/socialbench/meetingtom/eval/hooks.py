"""MeetingToM's scoring (MeetingToM 4.1) as stage hooks (core ``EvalHooks``); ``where`` as core declares it."""

from __future__ import annotations

from typing import Any

from socialbench.core.benchmarks import EvalHooks, Records
from socialbench.meetingtom.eval.scoring import (
    keyed_by_string,
    outcome_row,
    outcomes,
    parse_scores,
    score,
    score_outcomes,
)


class MeetingToMEval(EvalHooks):
    def score(self, instances: Records, predictions: Records, **where: Any) -> dict[str, Any]:
        return score(instances, predictions, **where)

    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        return parse_scores(data, source)

    def score_with_outcomes(self, instances: Records, predictions: Records, **where: Any):
        """Per instance, whether it is evaluated and right, with its values; the scores and the rows from one
        pass of ``scoring.outcomes``."""
        scored = outcomes(instances, predictions, **where)
        return keyed_by_string(score_outcomes(scored)), [outcome_row(o) for o in scored]


HOOKS = MeetingToMEval
