"""MeetingToM's tables as stage hooks (core ``ResultsHooks``): the paper's tables and figures, answer stability."""

from __future__ import annotations

from typing import Any

from socialbench.core.benchmarks import Records, ResultsHooks, RunScores
from socialbench.meetingtom.results.intervals import run_summary
from socialbench.meetingtom.results.stability import stability_files
from socialbench.meetingtom.results.tables import tables


class MeetingToMResults(ResultsHooks):
    def run_summary(self, rows: Records, *, source: str) -> Any:
        """The run's per-instance summary (``results.intervals.RunSummary``)."""
        return run_summary(rows, source)

    def tables(
        self, scores: RunScores, params: dict[str, Any], instances: Records | None = None, summaries: dict | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        return tables(scores, params, instances, summaries)

    def stability_tables(
        self, scores: RunScores, params: dict[str, Any], instances: Records | None = None, summaries: dict | None = None
    ) -> dict[str, str | bytes]:
        """stability.md/.csv/.tex: answer stability under option order (``meetingtom.robustness``)."""
        return dict(stability_files(instances, summaries, params))


HOOKS = MeetingToMResults
