"""toybench's scoring: accuracy over all instances (test double)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from socialbench.core.benchmarks import EvalHooks


class ToyEval(EvalHooks):
    def score(
        self,
        instances: list[dict[str, Any]],
        predictions: list[dict[str, Any]],
        *,
        source: str,
        lines: Sequence[int] | None = None,
        instances_source: str = "instances",
    ) -> dict[str, Any]:
        by_id = {p["id"]: p for p in predictions}
        right = sum(1 for i in instances if by_id.get(i["id"], {}).get("answer") == i["answer"])
        return {"all": {"accuracy": round(100 * right / len(instances), 2), "n": len(instances)}}

    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        return json.loads(data)


HOOKS = ToyEval
