"""MeetingToM as a benchmark plug-in: instances (Task 2.1 so far), answers, scoring, tables and
what predictions depend on. The data stages (demo release, acquisition, mining, clips, instances)
are ``socialbench meetingtom ...`` commands (cli.py); docs/meetingtom.md describes the pipeline.

Imports stay inside the methods: the registry imports this module to read the class."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from socialbench.benchmark import Benchmark, Exchange, Final


class MeetingToMBenchmark(Benchmark):
    name = "meetingtom"

    # ---- stages before inference --------------------------------------------------------------
    def demo(self, params: dict[str, Any], out_dir: Path) -> dict[str, list[str]]:
        """The demo release, written as a local mirror in the official AMI layout."""
        from socialbench.meetingtom.demo import DemoConfig, generate

        return generate(out_dir, DemoConfig.from_params(params))

    def load_instances(self, path: str | Path) -> list[dict[str, Any]]:
        from socialbench.meetingtom.instances import load_instances

        return load_instances(path)

    def dev_answers(self, dev_instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Options are shuffled per instance, so the prior of a task is its most frequent gold letter
        # on the dev split (a position bias, if the shuffle left one), per task.
        return [{"group": i["task"], "answers": {"answer": i["answer"]}} for i in dev_instances]

    # ---- answers ------------------------------------------------------------------------------
    def final_answer(self, instance: dict[str, Any], ex: Exchange) -> Final:
        """The option letter parsed from the answering call (strict JSON; meetingtom.parsing)."""
        from socialbench.meetingtom.parsing import parse_choice

        resp = ex.response
        labels = [o["label"] for o in instance["options"]]
        label, error, note = parse_choice(resp.text, labels)
        if resp.truncated and error:
            error = f"answer truncated at max_tokens: {error}"
        participant = next((o["participant"] for o in instance["options"] if o["label"] == label), None)
        return Final(
            fields={"raw": resp.text, "answer": label, "participant": participant, "note": note, "request_key": ex.key,
                    "inputs": [{"sha256": p.sha256, "timestamp": p.timestamp, "view": p.view} for p in ex.request.images()],
                    "finish_reason": resp.finish_reason},
            error=resp.error or error,
        )  # fmt: skip

    def no_call_answer(self, instance: dict[str, Any], problem: str) -> Final:
        """The answer of an instance that cannot be shown to the model: no call, scored invalid."""
        return Final(fields={"raw": None, "answer": None, "participant": None, "note": None, "request_key": None, "inputs": [],
                             "finish_reason": None, "media_error": problem}, error=f"media: {problem}")  # fmt: skip

    def prediction_record(self, instance: dict[str, Any], final: Final, *, model: str, method: str) -> dict[str, Any]:
        from socialbench.benchmark import request_pointer

        f = final.fields
        return {"id": instance["id"], "model": model, "method": method, "task": instance["task"], "source": instance["source"],
                "raw": f.get("raw"), "answer": f.get("answer"), "participant": f.get("participant"), "error": final.error,
                "note": f.get("note"), "request_key": f.get("request_key"), "inputs": f.get("inputs", []),
                "finish_reason": f.get("finish_reason"),
                # for error analysis from this one file: the gold answer, and where the request is
                "gold": instance.get("answer"),
                "request": request_pointer(self.name, model, method, instance["id"], f.get("request_key"))}  # fmt: skip

    # ---- scoring, tables, provenance -----------------------------------------------------------
    def score(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]], *, source: str,
              lines: Sequence[int] | None = None, instances_source: str = "instances") -> dict[str, Any]:
        from socialbench.meetingtom.scoring import score

        return score(instances, predictions, source=source, lines=lines, instances_source=instances_source)

    def parse_scores(self, data: bytes, source: str) -> dict[str, Any]:
        from socialbench.meetingtom.scoring import parse_scores

        return parse_scores(data, source)

    def tables(self, scores: dict[tuple[str, str], dict[str, Any]], params: dict[str, Any],
               instances: list[dict[str, Any]] | None = None, predictions: dict | None = None) -> tuple[dict[str, str], dict[str, Any]]:
        # Intervals come from the scores' counts (accuracy's bootstrap needs no more; meetingtom.tables),
        # so per-instance data is not asked for (tables_per_instance stays False).
        from socialbench.meetingtom.tables import tables

        return tables(scores, params)


BENCHMARK = MeetingToMBenchmark
