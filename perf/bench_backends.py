#!/usr/bin/env python3
"""Benchmark of the API backend machinery and the request cache (not a test; nothing is asserted
about time in the test suite).

1. Throughput: ``openai_compat`` (the official OpenAI SDK, async, bounded concurrency) against the
   loopback chat-completions server (TEST DOUBLE, tests/helpers/loopback.py) answering every call
   after a fixed latency: N requests at concurrency 16 versus concurrency 1. Target: >= 12x.
2. Warm cache: the embedded demo (generated, prepared and frame-sampled with the ``socialbench`` CLI
   in a scratch folder) run twice through ``socialbench infer`` with a model served by the loopback
   server; the second run must make zero requests.

  .venv/bin/python perf/bench_backends.py [--requests 400] [--latency 0.2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from socialbench.core.backend import ModelSpec, create_backend  # noqa: E402
from tests.helpers.loopback import LoopbackServer  # noqa: E402
from tests.helpers.moca_requests import moca_request  # noqa: E402


def throughput(n: int, latency: float, concurrency: int) -> dict:
    with LoopbackServer("openai", latency_s=latency) as srv:
        spec = ModelSpec(
            name="bench",
            backend="openai_compat",
            model_id="loopback",
            concurrency=concurrency,
            options={"base_url": srv.url, "timeout": 60},
        )
        backend = create_backend(spec)
        requests = [moca_request(i) for i in range(n)]
        errors = 0

        def on_result(_i, resp):
            nonlocal errors
            errors += resp.error is not None

        started = time.perf_counter()
        backend.complete_many(requests, on_result)
        wall = time.perf_counter() - started
        return {
            "concurrency": concurrency,
            "requests": n,
            "wall_s": round(wall, 2),
            "req_per_s": round(n / wall, 2),
            "errors": errors,
            "server_calls": len(srv.completions()),
            "max_in_flight": srv.max_in_flight,
        }


def socialbench(*args: str, cwd: Path) -> str:
    exe = Path(sys.executable).with_name("socialbench")
    cmd = [str(exe) if exe.exists() else "socialbench", *args]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip()


def build_demo(work: Path) -> Path:
    """The pipeline's demo inputs (data/processed/moca/test.jsonl), made with the CLI stages."""
    shutil.copy(REPO / "params.yaml", work / "params.yaml")
    socialbench("demo", "--params", "params.yaml", "--out-dir", "data/raw/moca_demo", cwd=work)
    media_io = []
    for split in ("test", "dev"):
        socialbench(
            "prepare",
            "--benchmark",
            "moca",
            "--raw",
            f"data/raw/moca_demo/{split}.jsonl",
            "--out",
            f"data/interim/moca/{split}.jsonl",
            "--report",
            f"prepare_{split}.jsonl",
            cwd=work,
        )
        media_io += ["--input", f"data/interim/moca/{split}.jsonl", "--output", f"data/processed/moca/{split}.jsonl"]
    socialbench(
        "moca",
        "frames",
        *media_io,
        "--frames-dir",
        "data/interim/frames",
        "--report",
        "media.jsonl",
        "--report-md",
        "media.md",
        "--params",
        "params.yaml",
        cwd=work,
    )
    return work / "data/processed/moca/test.jsonl"


def warm_cache(latency: float) -> dict:
    with (
        tempfile.TemporaryDirectory(prefix="socialbench-bench-") as tmp,
        LoopbackServer("openai", latency_s=latency) as srv,
    ):
        work = Path(tmp)
        instances = build_demo(work)
        params = yaml.safe_load((work / "params.yaml").read_text())
        params["models"] = {
            "loopback": {
                "backend": "openai_compat",
                "model_id": "loopback",
                "concurrency": 16,
                "options": {"base_url": srv.url},
            }
        }
        params["cache"] = {"path": str(work / "cache.sqlite")}
        (work / "params.yaml").write_text(yaml.safe_dump(params))
        runs = []
        for attempt in ("cold", "warm"):
            before = len(srv.completions())
            started = time.perf_counter()
            socialbench(
                "infer",
                "--benchmark",
                "moca",
                "--instances",
                str(instances),
                "--model",
                "loopback",
                "--params",
                "params.yaml",
                "--out",
                f"pred_{attempt}.jsonl",
                "--stats",
                f"stats_{attempt}.json",
                "--no-progress",
                cwd=work,
            )
            stats = json.loads((work / f"stats_{attempt}.json").read_text())
            runs.append(
                {
                    "run": attempt,
                    "wall_s": round(time.perf_counter() - started, 2),
                    "server_requests": len(srv.completions()) - before,
                    "cache_hits": stats.get("cache_hits"),
                    "cache_misses": stats.get("cache_misses"),
                }
            )
        same = (work / "pred_cold.jsonl").read_bytes() == (work / "pred_warm.jsonl").read_bytes()
        return {"instances": sum(1 for _ in open(instances)), "runs": runs, "identical_predictions": same}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--latency", type=float, default=0.2, help="server latency per call, seconds")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    results: dict = {"latency_s": args.latency, "cpu_count": os.cpu_count()}
    parallel = throughput(args.requests, args.latency, args.concurrency)
    serial = throughput(args.requests, args.latency, 1)
    results["throughput"] = [serial, parallel]
    results["speedup"] = round(serial["wall_s"] / parallel["wall_s"], 2)
    results["warm_cache"] = warm_cache(args.latency)

    print("| concurrency | requests | wall (s) | req/s | max in flight | errors |\n|---|---|---|---|---|---|")
    for r in results["throughput"]:
        print(
            f"| {r['concurrency']} | {r['requests']} | {r['wall_s']} | {r['req_per_s']} | {r['max_in_flight']} |"
            f" {r['errors']} |"
        )
    print(f"\nspeedup {args.concurrency} vs 1: {results['speedup']}x (target >= 12x)\n")
    print("| demo run | wall (s) | requests to server | cache hits | cache misses |\n|---|---|---|---|---|")
    for r in results["warm_cache"]["runs"]:
        print(f"| {r['run']} | {r['wall_s']} | {r['server_requests']} | {r['cache_hits']} | {r['cache_misses']} |")
    print(f"\nidentical predictions cold vs warm: {results['warm_cache']['identical_predictions']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    ok = results["speedup"] >= 12 and results["warm_cache"]["runs"][1]["server_requests"] == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
