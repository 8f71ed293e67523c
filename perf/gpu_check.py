#!/usr/bin/env python3
"""GPU check of the local backends (run by perf/gpu_check.sh; needs torch, transformers, Pillow,
PyYAML; no network, no socialbench install: src/ is put on the path).

1. Builds the demo test instances in process (the demo generator's images; video clips as sampled
   PNG frames, no ffmpeg needed) and their D.1 direct requests with the project's prompt builder.
2. Builds a tiny random LLaVA-architecture model locally (tests/helpers/tiny_vlm.py).
3. Runs the ``hf`` backend over all requests unbatched and batched; checks every request got a
   response without error, that the prediction records round-trip through JSON lines, and reports
   throughput and how often batched and unbatched greedy outputs agree.
4. When vLLM is importable: the vLLM preflight (socialbench.backends.vllm_preflight: the serve command
   line, engine config, request rendering and guided-JSON grammar checked through vLLM's own code),
   then the ``vllm`` backend (a ``vllm serve`` process it starts and stops) with guided JSON over the
   same requests, checking every answer parses and lies in the schema.

Exit status 0 when all checks pass. Numbers go to stdout and, with --json, to a file.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO)]

import torch  # noqa: E402
import transformers  # noqa: E402

from socialbench.core.backend import ModelSpec, Response, create_backend  # noqa: E402
from tests.helpers.demo_requests import DIRECT_TEMPLATES, demo_requests  # noqa: E402
from tests.helpers.tiny_vlm import build_tiny_vlm  # noqa: E402


def run_backend(backend, requests) -> tuple[list[Response], float]:
    out: list[Response | None] = [None] * len(requests)
    started = time.perf_counter()
    backend.complete_many(requests, lambda i, r: out.__setitem__(i, r))
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return [
        r if r is not None else Response(text=None, error="no response") for r in out
    ], time.perf_counter() - started


def answer_ok(text: str | None, schema: dict) -> bool:
    try:
        answer = json.loads(text or "")
    except ValueError:
        return False
    props = schema["properties"]
    return isinstance(answer, dict) and set(answer) == set(props) and all(answer[k] in props[k]["enum"] for k in props)


def records_round_trip(work: Path, name: str, instances, responses) -> bool:
    records = [
        {
            "id": inst["id"],
            "raw": r.text,
            "error": r.error,
            "input_tokens": r.input_tokens,
            "output_tokens": r.output_tokens,
        }
        for inst, r in zip(instances, responses)
    ]
    path = work / f"predictions_{name}.jsonl"
    path.write_text("".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records), encoding="utf-8")
    back = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return back == records


def summary(name: str, responses, wall: float) -> dict:
    out_tokens = sum(r.output_tokens for r in responses)
    return {
        "run": name,
        "requests": len(responses),
        "errors": sum(r.error is not None for r in responses),
        "wall_s": round(wall, 3),
        "req_per_s": round(len(responses) / wall, 2),
        "input_tokens": sum(r.input_tokens for r in responses),
        "output_tokens": out_tokens,
        "output_tok_per_s": round(out_tokens / wall, 1),
    }


def run_vllm(args, model_dir: Path, work: Path, instances, requests, results: dict) -> None:
    exe = shutil.which("vllm")
    spec = ModelSpec(
        name="tiny-vllm",
        backend="vllm",
        model_id=str(model_dir),
        max_frames=args.max_frames,
        concurrency=32,
        max_tokens=args.max_tokens,
        options={
            "executable": exe or [sys.executable, "-m", "vllm.entrypoints.cli.main"],
            "max_model_len": 16384,
            "gpu_memory_utilization": 0.4,
            "dtype": args.dtype,
            "startup_timeout": args.vllm_startup_timeout,
            "log_path": str(work / "vllm.log"),
            "extra_args": ["--enforce-eager"],
        },
    )
    backend = create_backend(spec)
    # The preflight (vLLM's parser, config, renderer and grammar; no engine) names most problems in
    # seconds; the server runs regardless, as the preflight may lag behind vLLM's internal APIs.
    started = time.perf_counter()
    try:
        report = backend.preflight(requests, [inst["id"] for inst in instances])
    except Exception as exc:  # noqa: BLE001 - recorded as a failed check; the server run goes on
        results["checks"]["vllm preflight: ran"] = False
        print(f"vllm preflight: crashed: {type(exc).__name__}: {exc}")
    else:
        results["vllm_preflight"] = {**report.as_dict(), "wall_s": round(time.perf_counter() - started, 1)}
        for name, passed in report.checks.items():
            results["checks"][f"vllm preflight: {name}"] = passed
        for problem in report.problems[:20]:
            print("vllm preflight:", problem)
        print(
            f"vllm preflight: vLLM {report.vllm_version}, {len(report.requests)} requests,"
            f" {'all checks pass' if report.ok else 'FAILED'}"
        )
    if args.vllm_preflight_only:
        print("vllm: --vllm-preflight-only, no server started")
        return
    try:
        started = time.perf_counter()
        backend.start()
        startup = time.perf_counter() - started
        responses, wall = run_backend(backend, requests)
    finally:
        backend.close()
    results.setdefault("runs", []).append(
        {**summary("vllm guided json", responses, wall), "startup_s": round(startup, 1)}
    )
    results["checks"]["vllm: no errors"] = all(r.error is None for r in responses)
    results["checks"]["vllm: answers parse and lie in the schema"] = all(
        answer_ok(r.text, q.json_schema) for r, q in zip(responses, requests)
    )
    results["checks"]["vllm: records parse"] = records_round_trip(work, "vllm", instances, responses)
    results["vllm_log"] = str(work / "vllm.log")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", type=int, default=72, help="demo test instances (default: all 72)")
    ap.add_argument("--max-frames", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--dtype", default="bfloat16", help="hf dtype on the GPU (float32 for bit-stable batching)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--skip-vllm", action="store_true")
    ap.add_argument(
        "--vllm-preflight-only",
        action="store_true",
        help="run the vLLM preflight but start no server (works on a CPU; see scripts/vllm_preflight.sh)",
    )
    ap.add_argument("--vllm-startup-timeout", type=float, default=600)
    ap.add_argument("--workdir", type=Path, help="keep the scratch files here (default: a temp dir, removed)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu_check: torch sees no CUDA device (use --device cpu for a dry run)", file=sys.stderr)
        return 2
    work = args.workdir or Path(tempfile.mkdtemp(prefix="socialbench-gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
        "vllm": importlib.util.find_spec("vllm") is not None,
    }
    print("environment:", json.dumps(env))
    results: dict = {"environment": env, "checks": {}}
    ok = True
    try:
        instances, requests = demo_requests(work, args.instances, args.max_frames)
        requests = [
            dataclasses.replace(r, decoding=dataclasses.replace(r.decoding, max_tokens=args.max_tokens))
            for r in requests
        ]
        corpus = DIRECT_TEMPLATES + tuple(r.messages[0].text() for r in requests[:6])
        model_dir = build_tiny_vlm(
            work / "tiny-vlm", hidden=128, layers=2, vocab_size=2000, extra_corpus=corpus, max_positions=16384
        )
        print(
            f"demo: {len(requests)} requests ({sum(1 for i in instances if 'frames' in i)} video); model: {model_dir}"
        )

        # ---- hf: unbatched vs batched ----------------------------------------------------------
        runs = {}
        for name, batch in (("hf unbatched", 1), (f"hf batch {args.batch_size}", args.batch_size)):
            spec = ModelSpec(
                name="tiny",
                backend="hf",
                model_id=str(model_dir),
                batch_size=batch,
                options={"device": args.device, "dtype": args.dtype, "local_files_only": True},
            )
            backend = create_backend(spec)
            backend.load()
            run_backend(backend, requests[:2])  # warm-up (kernels, allocator)
            responses, wall = run_backend(backend, requests)
            backend.close()
            runs[name] = responses
            results.setdefault("runs", []).append(summary(name, responses, wall))
            results["checks"][f"{name}: no errors"] = all(
                r.error is None and isinstance(r.text, str) for r in responses
            )
            results["checks"][f"{name}: records parse"] = records_round_trip(
                work, name.replace(" ", "_"), instances, responses
            )
        (a, ra), (b, rb) = runs.items()
        agree = sum(x.text == y.text for x, y in zip(ra, rb)) / len(ra)
        results["hf_batched_vs_unbatched_agreement"] = round(agree, 4)

        # ---- vllm: preflight, then guided JSON through a server the backend owns ------------------
        if env["vllm"] and not args.skip_vllm:
            run_vllm(args, model_dir, work, instances, requests, results)
        else:
            print("vllm: not importable here (or --skip-vllm); its check is skipped")
    finally:
        if args.workdir is None and "vllm_log" not in results:
            shutil.rmtree(work, ignore_errors=True)

    print("\n| run | requests | errors | wall (s) | req/s | output tok/s |\n|---|---|---|---|---|---|")
    for r in results.get("runs", []):
        print(
            f"| {r['run']} | {r['requests']} | {r['errors']} | {r['wall_s']} | {r['req_per_s']} |"
            f" {r['output_tok_per_s']} |"
        )
    print(
        f"\nbatched vs unbatched greedy agreement (hf, {args.dtype}):"
        f" {results.get('hf_batched_vs_unbatched_agreement')}"
    )
    for name, passed in results["checks"].items():
        print(f"{'PASS' if passed else 'FAIL'}  {name}")
        ok &= bool(passed)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
