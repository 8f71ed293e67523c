"""MoCA's scoring (section 3.3) as stage hooks (core ``EvalHooks``): score files and per-instance outcomes.
``where`` (source, lines, instances_source) names the files in errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from socialbench.core.benchmarks import EvalHooks, Records
from socialbench.moca.eval.outcomes import rows_of
from socialbench.moca.eval.scoring import matched, parse_scores, scenario_scores

if TYPE_CHECKING:
    from socialbench.moca.benchmark import MocaBenchmark


class MocaEval(EvalHooks):
    benchmark: MocaBenchmark

    def _matched(self, instances: Records, predictions: Records, where: dict[str, Any]) -> list:
        """``scoring.matched`` with the benchmark's taxonomy: one row per instance, as both hooks score it."""
        where = {"instances_source": "instances", **where}
        return matched(instances, predictions, *self.benchmark.taxonomy.as_sets(), **where)

    def score(self, instances: Records, predictions: Records, **where: Any) -> dict[str, Any]:
        return scenario_scores(self._matched(instances, predictions, where))

    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        return parse_scores(data, source)

    def score_with_outcomes(self, instances: Records, predictions: Records, **where: Any):
        """Per instance, each field's correctness, invalid, the resolved answer and its format flags; the
        scores and the rows from one ``matched`` pass."""
        matches = self._matched(instances, predictions, where)
        return scenario_scores(matches), rows_of(matches)


HOOKS = MocaEval
