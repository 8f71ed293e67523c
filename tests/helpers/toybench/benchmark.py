"""The toybench plug-in (test double): see the package docstring."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialbench.core.benchmarks import Benchmark, Exchange, Final
from socialbench.core.errors import DataError


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

    def demo(self, params: dict[str, Any], out_dir: Path) -> dict[str, list[dict[str, Any]]]:
        from socialbench.core.io import write_jsonl

        out = {"test": make_instances(params["toybench"]["n"]), "dev": make_instances(3, "dev")}
        for split, recs in out.items():
            write_jsonl(Path(out_dir) / f"{split}.jsonl", recs)
        return out

    def load_instances(self, path: str | Path) -> list[dict[str, Any]]:
        from socialbench.core.io import read_jsonl

        recs = read_jsonl(path)
        for rec in recs:
            if not isinstance(rec.get("options"), list):
                raise DataError(str(path), "must be a list", record=str(rec.get("id")), field="options")
        return recs

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

    def tables(self, scores, params):
        rows = [f"| {m} | {meth} | {sc['all']['accuracy']:.2f} |" for (m, meth), sc in sorted(scores.items())]
        md = "| model | method | accuracy |\n|---|---|---:|\n" + "\n".join(rows) + "\n"
        return {"accuracy.md": md}, {f"{m}.{meth}": sc["all"]["accuracy"] for (m, meth), sc in sorted(scores.items())}


BENCHMARK = ToyBenchmark
