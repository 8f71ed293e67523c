"""The toybench plug-in (test double): see the package docstring."""

from __future__ import annotations

import json
from typing import Any

from socialbench.core.benchmarks import Benchmark, Exchange, Final


def make_instances(n: int, split: str = "test") -> list[dict[str, Any]]:
    return [
        {
            "id": f"toy-{split}-{k:03d}",
            "question": f"Which colour is item {k}?",
            "options": ["red", "green", "blue"],
            "answer": ["red", "green", "blue"][k % 3],
        }
        for k in range(n)
    ]


def parse_choice(text: str | None, options: list[str]) -> tuple[str | None, str | None]:
    """(answer, error) from a JSON object {"answer": option}."""
    try:
        obj = json.loads((text or "").strip())
    except json.JSONDecodeError:
        return None, "unparsable"
    value = obj.get("answer") if isinstance(obj, dict) else None
    return (value, None) if value in options else (None, f"invalid answer {value!r}")


class ToyBenchmark(Benchmark):
    name = "toybench"

    def dev_answers(self, dev_instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"group": "all", "answers": {"answer": i["answer"]}} for i in dev_instances]

    def answer_task(self, instance: dict[str, Any], stage: str) -> dict[str, Any]:
        return {
            "benchmark": self.name,
            "stage": stage,
            "prior_group": "all",
            "query": instance["question"],
            "choices": [{"field": "answer", "options": [{"value": o, "text": o} for o in instance["options"]]}],
        }

    def final(self, ex: Exchange, instance: dict[str, Any]) -> Final:
        answer, error = parse_choice(ex.response.text, instance["options"])
        return Final(fields={"answer": answer, "raw": ex.response.text}, error=ex.response.error or error)


BENCHMARK = ToyBenchmark
