"""MeetingToM's scoring (MeetingToM 4.1) as stage hooks (core ``EvalHooks``); keywords as core declares them."""

from __future__ import annotations

from typing import Any

from socialbench.core.benchmarks import EvalHooks
from socialbench.meetingtom.eval.scoring import outcome_rows, parse_scores, score


class MeetingToMEval(EvalHooks):
    def score(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        return score(instances, predictions, **kw)

    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        return parse_scores(data, source)

    def outcomes(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]], **kw: Any) -> list[dict]:
        """Per instance, whether it is evaluated and right, with its values (``eval.scoring.outcome_rows``)."""
        return outcome_rows(instances, predictions, **kw)


HOOKS = MeetingToMEval
