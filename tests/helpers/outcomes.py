"""A run's summary as the tables stage makes it, for tests that start from prediction records: the
outcome rows the score stage writes (``Benchmark.outcomes``), through their JSON lines and back, then the
benchmark's ``run_summary``."""

from __future__ import annotations

import json
from typing import Any

from socialbench.core.io import jsonl_text


def run_summary(bench, instances: list[dict[str, Any]], records: list[dict[str, Any]], source: str = "p.jsonl") -> Any:
    rows = [
        json.loads(line)
        for line in jsonl_text(bench.eval.score_with_outcomes(instances, records, source=source)[1]).splitlines()
    ]
    return bench.results.run_summary(rows, source=source)
