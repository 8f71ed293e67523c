#!/usr/bin/env python3
"""Benchmark of CoDAR on the runner (not a test; nothing is asserted about time in the test suite).

CoDAR runs its stages one after another per instance, so a run is a sequence of rounds; the runner
sends round k of every instance in flight together, bounded by the model's concurrency. This measures
whether the model's concurrency stays busy across stages:

1. Cold run: ``codar`` with the real ``openai_compat`` backend (official OpenAI SDK, async) against the
   loopback chat-completions server (TEST DOUBLE, tests/helpers/loopback.py), every call answered after
   ``--latency`` seconds (``Fault(delay_s=...)``), concurrency 16, ``--instances`` synthetic MoCA
   instances (image-text, real PNGs). The stage requests go out with ``decoding: constrained`` (each
   stage's JSON schema), and the server answers from the schema (first allowed value, one item per
   list), so every stage parses; the checker REJECTS a quarter of the instances once (breakpoint 3),
   so revision rounds with fewer calls are part of the run.
   Ideal wall time: for each round, ceil(calls / concurrency) x latency, summed over rounds.
   Target: measured / ideal <= 1.3.
2. Warm rerun: the same run again on the same request cache: zero calls to the server, and
   byte-identical predictions and traces.

  .venv/bin/python perf/bench_codar.py [--instances 48] [--latency 0.2] [--concurrency 16]
                                             [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from PIL import Image  # noqa: E402

import socialbench.backends.openai_compat  # noqa: E402,F401  (imported before any timing)
from socialbench.core.backend import ModelSpec, create_backend  # noqa: E402
from socialbench.core.benchmarks import get_benchmark  # noqa: E402
from socialbench.core.cache import RequestCache  # noqa: E402
from socialbench.core.io import jsonl_text  # noqa: E402
from socialbench.core.runner import run_method  # noqa: E402
from tests.conftest import make_instance  # noqa: E402
from tests.helpers.loopback import Fault, LoopbackServer  # noqa: E402

SCENARIOS = ("affection", "intent", "stance")


def schema_instance(schema: dict[str, Any], name: str = "value") -> Any:
    """A valid instance of a JSON schema: the first enum value, one item per array (at least
    minItems), a placeholder string."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: schema_instance(v, k) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [schema_instance(schema.get("items", {}), name) for _ in range(max(1, schema.get("minItems", 1)))]
    return f"{name} (loopback)"


class StageServer(LoopbackServer):
    """The loopback OpenAI server answering each CoDAR stage from its schema; the checker rejects
    the first pass of every fourth chain (by a hash of its input) at breakpoint 3 (its listen
    backlog is LoopbackServer's 128, as real servers have)."""

    def _answer(self, body: dict[str, Any], fault: Fault | None = None) -> tuple[int, dict[str, str], bytes]:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        answer = schema_instance(schema)
        user = str(body["messages"][-1]["content"])
        if (
            "status" in answer
            and "[Previous check]" not in user
            and int(hashlib.sha256(user.encode()).hexdigest(), 16) % 4 == 0
        ):
            answer = {"status": "REJECTED", "breakpoint": 3, "refine": "The conflict does not name its cue (loopback)."}
        text = json.dumps(answer)
        doc = {
            "id": "chatcmpl-loopback",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "?"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": len(json.dumps(body)) // 4,
                "completion_tokens": len(text) // 4 + 1,
                "total_tokens": len(json.dumps(body)) // 4 + len(text) // 4 + 1,
            },
        }
        return 200, {}, json.dumps(doc).encode()


def make_instances(folder: Path, n: int) -> list[dict[str, Any]]:
    out = []
    for k in range(n):
        img = folder / f"img{k:03d}.png"
        Image.new("RGB", (64, 64), ((37 * k) % 256, (91 * k) % 256, (53 * k) % 256)).save(img)
        out.append(
            make_instance(f"b{k:03d}", scenario=SCENARIOS[k % 3], media=[str(img)], text=f"Benchmark caption #{k}.")
        )
    return out


def spec_for(srv: StageServer, concurrency: int) -> ModelSpec:
    return ModelSpec(
        name="loopback",
        backend="openai_compat",
        model_id="loopback",
        concurrency=concurrency,
        max_tokens=512,
        options={"base_url": srv.url, "timeout": 60},
    )


def one_run(instances: list[dict[str, Any]], cache: RequestCache, srv: StageServer, concurrency: int) -> dict[str, Any]:
    bench = get_benchmark("moca")
    spec = spec_for(srv, concurrency)
    method = bench.method("codar", spec, 1, {"decoding": "constrained"})
    backend = create_backend(spec)
    sent: list[list[Any]] = []  # the requests of each backend call (one per round with misses)
    complete_many = backend.complete_many

    def recording(requests, on_result):
        sent.append(list(requests))
        complete_many(requests, on_result)

    backend.complete_many = recording
    before = len(srv.completions())
    started = time.perf_counter()
    records, traces, stats = run_method(
        bench, method, instances, spec=spec, cache=cache, seed=1, backend=backend, progress=False
    )
    wall = time.perf_counter() - started
    backend.close()
    per_round: dict[int, int] = {}
    for t in traces:
        for c in t["calls"]:
            if not c["cached"]:
                per_round[c["round"]] = per_round.get(c["round"], 0) + 1
    return {
        "wall_s": wall,
        "server_calls": len(srv.completions()) - before,
        "calls_per_round": per_round,
        "rounds": stats.rounds,
        "errors": stats.errors,
        "cache_hits": stats.cache_hits,
        "method": stats.method,
        # what a warm rerun must reproduce: the records, and the traces but for each call's cached flag
        "bytes": jsonl_text(records)
        + jsonl_text(
            [{**t, "calls": [{k: v for k, v in c.items() if k != "cached"} for c in t["calls"]]} for t in traces]
        ),
        "max_in_flight": srv.max_in_flight,
        "sent": sent,
    }


def reference_run(sent: list[list[Any]], srv: StageServer, concurrency: int) -> float:
    """The same requests, round by round, straight through the backend (no method, runner or cache):
    what the backend and the server cost by themselves."""
    backend = create_backend(spec_for(srv, concurrency))
    started = time.perf_counter()
    for requests in sent:
        backend.complete_many(requests, lambda _i, _resp: None)
    wall = time.perf_counter() - started
    backend.close()
    return wall


def ideal_s(calls_per_round: dict[int, int], latency: float, concurrency: int) -> float:
    return sum(math.ceil(n / concurrency) for n in calls_per_round.values()) * latency


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", type=int, default=48)
    ap.add_argument("--latency", type=float, default=0.2, help="server latency per call, seconds")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3, help="cold runs (each on a fresh cache); the median is reported")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    delay = lambda _n, _body: Fault(delay_s=args.latency)  # noqa: E731
    cold_runs, warm = [], None
    with (
        tempfile.TemporaryDirectory(prefix="socialbench-bench-codar-") as tmp,
        StageServer("openai", fault_for=delay) as srv,
    ):
        work = Path(tmp)
        instances = make_instances(work, args.instances)
        for r in range(args.repeat):
            cache = RequestCache(work / f"cache{r}.sqlite")
            cold = one_run(instances, cache, srv, args.concurrency)
            cold["ideal_s"] = ideal_s(cold["calls_per_round"], args.latency, args.concurrency)
            cold["ratio"] = cold["wall_s"] / cold["ideal_s"]
            cold["reference_s"] = reference_run(cold.pop("sent"), srv, args.concurrency)
            cold["reference_ratio"] = cold["reference_s"] / cold["ideal_s"]
            cold["over_reference"] = cold["wall_s"] / cold["reference_s"]
            cold_runs.append(cold)
            if r == 0:
                warm = one_run(instances, cache, srv, args.concurrency)
                warm["identical"] = warm.pop("bytes") == cold["bytes"]
                warm.pop("calls_per_round")
                warm.pop("sent")
            cache.close()
    median = sorted(cold_runs, key=lambda c: c["ratio"])[len(cold_runs) // 2]
    results = {
        "instances": args.instances,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "cpu_count": os.cpu_count(),
        "repeat": args.repeat,
        "cold": [
            {k: (round(v, 3) if isinstance(v, float) else v) for k, v in c.items() if k != "bytes"} for c in cold_runs
        ],
        "median_ratio": round(median["ratio"], 3),
        "warm": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in warm.items()},
    }
    m = median
    calls = sum(m["calls_per_round"].values())
    print(
        "| run | rounds | calls | calls per round | wall (s) | ideal (s) | wall / ideal | reference (s) |"
        " reference / ideal | wall / reference | max in flight | errors |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in cold_runs:
        print(
            f"| cold | {c['rounds']} | {sum(c['calls_per_round'].values())} | "
            f"{', '.join(str(c['calls_per_round'][k]) for k in sorted(c['calls_per_round']))} | {c['wall_s']:.2f} | "
            f"{c['ideal_s']:.2f} | {c['ratio']:.2f}x | {c['reference_s']:.2f} | {c['reference_ratio']:.2f}x | "
            f"{c['over_reference']:.2f}x | {c['max_in_flight']} | {c['errors']} |"
        )
    print(
        f"\nmedian ratio {results['median_ratio']}x over {args.repeat} cold run(s) of {calls} calls (target <= 1.3x);"
        f" run summary {m['method']}"
    )
    print(
        f"warm rerun: {warm['server_calls']} server calls, {warm['cache_hits']} cache hits, wall"
        f" {warm['wall_s']:.2f} s,"
        f" identical predictions and traces: {warm['identical']}"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    ok = results["median_ratio"] <= 1.3 and warm["server_calls"] == 0 and warm["identical"] and median["errors"] == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
