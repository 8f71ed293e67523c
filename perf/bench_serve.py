#!/usr/bin/env python3
"""Benchmark of the server route (``transformers serve`` behind the ``transformers_serve`` backend)
against in-process generation with the same weights (not a test; nothing is asserted about time in the
test suite). Issue 39, point 7: "the server route against in-process, at concurrency 1 and 4".

The model is a folder in the Hugging Face layout: by default the pipeline's SmolLM2-135M-Instruct
(``data/models/smollm2``, made by ``socialbench weights convert``), else the folder ``--model`` names.
The prompts are MoCA direct prompts as the pipeline builds them for a text-only model (the system
prompt and the instance's text, no images) from ``--instances`` (default the demo's
``data/processed/moca/test.jsonl``), first ``--prompts`` of them. Every route decodes greedily up to
``--max-tokens`` free tokens (the server ignores ``response_format``, so in-process decodes without a
constraint too), on CPU in float32.

1. In-process reference: the folder loaded once with transformers (``AutoModelForCausalLM``), the chat
   template applied, ``model.generate`` per prompt (batch 1), then in batches of 4 (left-padded).
2. Server route: ``transformers serve`` started by the backend (its load timed: start to /health), the
   prompts sent through ``openai_compat`` at concurrency 1, then at concurrency 4.

Ratios are wall-time ratios measured in the same run: server c1 / in-process batch 1, server c4 /
in-process batch 4, and each route's 4 against its 1.

  .venv/bin/python perf/bench_serve.py [--model data/models/smollm2] [--prompts 8] [--max-tokens 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from socialbench.core.backend import BackendContext, Decoding, Message, ModelSpec, Request, create_backend  # noqa: E402


def prompts(instances: Path, n: int, max_tokens: int) -> list[Request]:
    """The first ``n`` MoCA direct requests for ``instances``, text parts only (a text-only model's)."""
    from socialbench.core.benchmarks import get_benchmark

    bench = get_benchmark("moca")
    spec = ModelSpec(name="bench", backend="random")
    method = bench.method("direct", spec, 1)
    out = []
    for line in instances.read_text("utf-8").splitlines():
        if len(out) == n:
            break
        step = method.step(json.loads(line), [])
        if not isinstance(step, list):  # answered without a call (the demo's faulty media)
            continue
        (request,) = step
        messages = tuple(Message(m.role, tuple(p for p in m.content if isinstance(p, str))) for m in request.messages)
        free = Decoding(max_tokens=max_tokens, temperature=0.0)
        out.append(Request(request.request_id, messages, request.task, free))
    return out


def chat(request: Request) -> list[dict]:
    return [{"role": m.role, "content": m.text()} for m in request.messages]


def in_process(folder: Path, requests: list[Request], batch: int) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(folder, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    load_s = time.perf_counter() - started
    texts = [tokenizer.apply_chat_template(chat(r), add_generation_prompt=True, tokenize=False) for r in requests]
    max_new = requests[0].decoding.max_tokens
    out_tokens = 0
    answers = []
    started = time.perf_counter()
    for i in range(0, len(texts), batch):
        enc = tokenizer(texts[i : i + batch], return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.inference_mode():
            seq = model.generate(**enc, max_new_tokens=max_new, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        new = seq[:, enc["input_ids"].shape[1] :]
        for row in new:
            ids = [t for t in row.tolist() if t != tokenizer.pad_token_id]
            out_tokens += len(ids)
            answers.append(tokenizer.decode(ids, skip_special_tokens=True))
    wall = time.perf_counter() - started
    return {
        "route": "in-process",
        "batch": batch,
        "load_s": round(load_s, 2),
        "wall_s": round(wall, 2),
        "output_tokens": out_tokens,
        "tokens_per_s": round(out_tokens / wall, 2),
        "answers": answers,
    }


def served(folder: Path, requests: list[Request], concurrencies: list[int], log_dir: Path) -> list[dict]:
    results = []
    spec_base = {"name": "bench-server", "backend": "transformers_serve", "model_id": str(folder), "modalities": ()}
    options = {"device": "cpu", "dtype": "float32", "timeout": 900, "log_path": str(log_dir / "serve.log")}
    first = create_backend(ModelSpec(**spec_base, concurrency=1, options=options), BackendContext(seed=1))
    try:
        started = time.perf_counter()
        first.start()
        load_s = time.perf_counter() - started
        for c in concurrencies:
            backend = first if c == 1 else create_backend(ModelSpec(**spec_base, concurrency=c, options=options))
            got: dict = {}
            t0 = time.perf_counter()
            backend.complete_many(requests, got.__setitem__)  # a second backend attaches to the running server
            wall = time.perf_counter() - t0
            if backend is not first:
                backend.close()
            responses = [got[i] for i in range(len(requests))]
            errors = [r.error for r in responses if r.error]
            if errors:
                raise SystemExit(f"server route: {len(errors)} failed calls, e.g. {errors[0]}")
            out_tokens = sum(r.output_tokens for r in responses)
            results.append(
                {
                    "route": "server",
                    "concurrency": c,
                    "load_s": round(load_s, 2),
                    "wall_s": round(wall, 2),
                    "output_tokens": out_tokens,
                    "tokens_per_s": round(out_tokens / wall, 2),
                    "answers": [r.text for r in responses],
                }
            )
    finally:
        first.close()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=REPO / "data" / "models" / "smollm2")
    ap.add_argument("--instances", type=Path, default=REPO / "data" / "processed" / "moca" / "test.jsonl")
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    if not (args.model / "config.json").is_file():
        raise SystemExit(
            f"{args.model}: no model folder (build it: snakemake --cores 2 real, or name one with --model)"
        )
    if not args.instances.is_file():
        raise SystemExit(f"{args.instances}: no MoCA instances (run the demo first, or name a file with --instances)")
    import torch

    torch.set_num_threads(min(2, os.cpu_count() or 1))  # the server's torch takes the same (2 cores here)
    requests = prompts(args.instances, args.prompts, args.max_tokens)
    rows = [in_process(args.model, requests, 1), in_process(args.model, requests, 4)]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SOCIALBENCH_SERVER_DIR"] = str(Path(tmp) / "servers")  # its own registry
        rows += served(args.model, requests, [1, 4], Path(tmp))
    by = {(r["route"], r.get("batch") or r.get("concurrency")): r for r in rows}
    same = sum(a == b for a, b in zip(by[("in-process", 1)]["answers"], by[("server", 1)]["answers"]))
    summary = {
        "prompts": len(requests),
        "max_tokens": args.max_tokens,
        "server_c1_over_in_process_b1": round(by[("server", 1)]["wall_s"] / by[("in-process", 1)]["wall_s"], 2),
        "server_c4_over_in_process_b4": round(by[("server", 4)]["wall_s"] / by[("in-process", 4)]["wall_s"], 2),
        "server_c4_over_c1": round(by[("server", 4)]["wall_s"] / by[("server", 1)]["wall_s"], 2),
        "in_process_b4_over_b1": round(by[("in-process", 4)]["wall_s"] / by[("in-process", 1)]["wall_s"], 2),
        "server_load_over_in_process_load": round(by[("server", 1)]["load_s"] / by[("in-process", 1)]["load_s"], 2),
        "greedy_answers_equal_server_c1_vs_in_process_b1": f"{same}/{len(requests)}",
    }
    print("| route | batch / concurrency | load (s) | wall (s) | output tokens | tokens/s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['route']} | {r.get('batch') or r.get('concurrency')} | {r['load_s']} | {r['wall_s']} |"
            f" {r['output_tokens']} | {r['tokens_per_s']} |"
        )
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summary": summary}, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
