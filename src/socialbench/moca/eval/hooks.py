"""MoCA's scoring (section 3.3) as stage hooks (core ``EvalHooks``): score files and per-instance outcomes.
``where`` (source, lines, instances_source) names the files in errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from socialbench.core.benchmarks import EvalHooks
from socialbench.moca.eval.outcomes import rows_of
from socialbench.moca.eval.scoring import matched, parse_scores, scenario_scores, score

if TYPE_CHECKING:
    from socialbench.moca.benchmark import MocaBenchmark


class MocaEval(EvalHooks):
    benchmark: MocaBenchmark

    def score(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]], **where: Any) -> dict[str, Any]:
        where = {"instances_source": "instances", **where}
        return score(instances, predictions, *self.benchmark.taxonomy.as_sets(), **where)

    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        return parse_scores(data, source)

    def score_with_outcomes(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]], **where: Any):
        """Per instance, each field's correctness, invalid, the resolved answer and its format flags; the
        scores and the rows from one :func:`matched` pass."""
        where = {"instances_source": "instances", **where}
        matches = matched(instances, predictions, *self.benchmark.taxonomy.as_sets(), **where)
        return scenario_scores(matches), rows_of(matches)


HOOKS = MocaEval
