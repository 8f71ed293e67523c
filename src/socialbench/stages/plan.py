"""``socialbench plan``: before a run, what it will take per benchmark, model and run (calls, cached calls,
tokens, USD, wall time) and where params ``plan`` budgets are exceeded; nothing is called. Estimates:
docs/plan.md and ``socialbench.core.planning``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from socialbench.backends.images import fitted_size
from socialbench.core import weights
from socialbench.core.backend import Backend, BackendContext, ModelSpec, create_backend
from socialbench.core.benchmarks import available_benchmarks
from socialbench.core.cache import RequestCache, cache_key
from socialbench.core.cache_pg import PostgresRequestCache, cache_store_url
from socialbench.core.config import load_params
from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.core.io import write_text_atomic
from socialbench.core.modalities import backend_declaration
from socialbench.core.paths import check_io
from socialbench.core.planning import (
    Budget,
    ReplayCache,
    TokenCounter,
    budget_warnings,
    chars_tokens,
    image_tokens,
    plan_instance,
    run_plan,
    to_markdown,
)
from socialbench.results.layout import model_runs
from socialbench.results.layout import runs as layout_runs
from socialbench.stages.common import BENCH_HELP, Opt, load_benchmark, stage_app

app = stage_app("Plan a run: calls, cached calls, tokens, cost and wall time, before any call.")


def default_split(benchmark: str, split: str) -> Path:
    """Where the pipeline puts a benchmark's processed split (rules/<benchmark>.smk)."""
    return Path("data/processed") / benchmark / f"{split}.jsonl"


def parse_pairs(values: list[str], option: str, known: list[str]) -> dict[str, Path]:
    """``<benchmark>=PATH`` options -> {benchmark: path}; malformed or unknown ones refused by name."""
    out = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"plan: {option} {value!r}: expected <benchmark>=PATH")
        if name not in known:
            raise ConfigError(
                f"plan: {option} {value!r}: {name!r} is no benchmark of params (params define: {', '.join(known)})"
            )
        out[name] = Path(path)
    return out


def check_filters(p: dict[str, Any], benchmarks: list[str], want_b, want_m, want_r) -> None:
    """A --benchmark, --model or --run that params do not define is refused with its key."""
    for b in want_b:
        if b not in benchmarks:
            raise ConfigError(
                f"plan: --benchmark {b}: params define no section {b!r} (they define: {', '.join(benchmarks)})"
            )
    for m in want_m:
        if m not in p["models"]:
            raise ConfigError(f"plan: models.{m}: no such model in params (known: {', '.join(p['models'])})")
    every = sorted({r for b in benchmarks for _, r in layout_runs(p, b, p[b]["methods"])})  # order runs too
    for r in want_r:
        if r not in every:
            raise ConfigError(f"plan: --run {r}: no <benchmark>.methods in params names it (runs: {', '.join(every)})")


def open_cache(path: Path | None, p: dict[str, Any]):
    """The run's request cache read-only (None: none yet): SOCIALBENCH_CACHE_URL's store, else the SQLite file."""
    if path is None:
        url = cache_store_url()
        if url is not None:
            return PostgresRequestCache.open_readonly(url, p["waits"]["connect_s"])
        path = Path(p["cache"]["path"])
    return RequestCache.open_readonly(path) if path.exists() else None


def token_counter(spec):
    """A new call's input-token counter: 0 without a prompt, else the model's tokenizer offline, else chars/4."""
    base = {
        "per_image": image_tokens(spec.image_size or 448),
        "video_frames": spec.max_frames,
        "image_side": image_side(spec.image_size),
    }
    try:
        reads_no_prompt = bool(backend_declaration(spec.backend).choices_only)
    except Exception:  # noqa: BLE001 - a backend without a declaration: it reads the prompt
        reads_no_prompt = False
    if reads_no_prompt:
        return TokenCounter(
            lambda _text: 0, per_image=0, video_frames=0, label=f"0 (backend {spec.backend} reads no prompt)"
        )
    where = spec.model_path or _converted(spec.gguf_file) or (spec.options or {}).get("model_path") or spec.model_id
    if where and (spec.backend in ("hf", "vllm", "minilm") or Path(str(where)).is_dir()):
        try:
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(str(where), local_files_only=True)
            count = lambda text: len(tok(text, add_special_tokens=False)["input_ids"])
            return TokenCounter(count, label=f"tokenizer {where}", **base)
        except Exception:  # noqa: BLE001 (none offline, or no tokenizer there: the documented estimate)
            pass
    return TokenCounter(chars_tokens, label="chars/4", **base)


def image_side(max_side: int | None):
    """part -> the longest side it is sent at (capped by ``max_side``; 448 when unreadable)."""
    sides: dict[str, int] = {}

    def side(part) -> int:
        if part.sha256 not in sides:
            try:
                from PIL import Image

                with Image.open(part.path) as img:
                    sides[part.sha256] = max(fitted_size(img.size, max_side))
            except (OSError, ValueError):
                sides[part.sha256] = max_side or 448
        return sides[part.sha256]

    return side


def _converted(gguf_file):
    """The weights cache's folder of ``gguf_file`` when it holds one (nothing converted here)."""
    if not gguf_file or not Path(gguf_file).is_file():
        return None
    folder = weights.cache_root() / weights.cache_key(weights.sha256_file(gguf_file))
    return str(folder) if (folder / weights.MANIFEST).is_file() else None


def model_latency(store, model: str, fallback: float | None) -> float | None:
    """Seconds per call: the model's stored mean, else params ``plan.latency_s``."""
    if store is not None:
        for m in store.stats()["models"]:
            if m["model"] == model and m["entries"] and m["latency_s"]:
                return m["latency_s"] / m["entries"]
    return fallback


def lookup_for(store, identity: dict[str, Any] | None, model: str):
    """request -> (key, stored response) or None: by exact cache key with the backend's identity, else by
    model and request id (the newest entry; the row says so)."""
    if store is None:
        return lambda request: None

    def lookup(request):
        if identity is not None:
            key = cache_key(identity, request)
        else:
            entries = store.entries_for(model, request.request_id)
            key = entries[0]["key"] if entries else None
        resp = None if key is None else store.get(key)
        return None if resp is None else (key, resp)

    return lookup


def backend_identity(spec, seed: int, dev_answers) -> tuple[dict[str, Any] | None, str | None, Any]:
    """(identity, None, answers without a call) without loading a model, or (None, why not, None)."""
    try:
        backend = create_backend(spec, BackendContext(seed=seed, dev_answers=dev_answers))
        try:
            local = type(backend).answer_without_call is not Backend.answer_without_call
            return backend.identity(), None, backend.answer_without_call if local else None
        finally:
            backend.close()
    except (SocialbenchError, ImportError, OSError) as exc:
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__, None


@app.command("plan")
def plan(
    params: Path = Opt(Path("params.yaml"), help="the params file (models, runs, prices, plan budgets)"),
    benchmark: list[str] = Opt([], help=f"plan only this {BENCH_HELP} (repeatable; default: every one params define)"),
    model: list[str] = Opt([], help="plan only this model (repeatable)"),
    run: list[str] = Opt([], help="plan only this run, e.g. codar (repeatable)"),
    instances: list[str] = Opt(
        [],
        help="<benchmark>=PATH: its instances (default data/processed/<benchmark>/test.jsonl)",
    ),
    dev: list[str] = Opt([], help="<benchmark>=PATH: its dev split (default data/processed/<benchmark>/dev.jsonl)"),
    cache: Path | None = Opt(
        None,
        help="request cache file (default: the run's store: SOCIALBENCH_CACHE_URL, else cache.path)",
    ),
    as_json: bool = Opt(False, "--json", help="print the rows as a JSON list instead of the table"),
    out: Path | None = Opt(None, help="also write the rows here (JSON list)"),
    md: Path | None = Opt(None, help="also write the table here (Markdown)"),
) -> None:
    """Plan a run: calls, cached calls, tokens, cost and wall time per benchmark, model and run."""
    check_io({"--params": params, "--cache": cache}, {"--out": out, "--md": md})
    p = load_params(params)
    defined = [b for b in available_benchmarks() if b in p]
    instances_of = parse_pairs(list(instances), "--instances", defined)
    dev_of = parse_pairs(list(dev), "--dev", defined)
    check_filters(p, defined, benchmark, model, run)
    store = open_cache(cache, p)
    rows, notes = [], []
    try:
        for b in defined:
            if benchmark and b not in benchmark:
                continue
            bench = load_benchmark(b)
            section = p[b]
            path = instances_of.get(b, default_split(b, "test"))
            if not path.is_file():
                raise DataError(str(path), f"no processed instances of {b}: build them first (`snakemake plan` does)")
            insts, info = bench.subset(section, bench.schema.load_instances(path), p["seed"])
            if info is not None:
                notes.append(f"{b}: {info.note()}")
            dev_path = dev_of.get(b, default_split(b, "dev"))
            dev_answers = bench.dev_answers(bench.schema.load_instances(dev_path)) if dev_path.is_file() else None
            for model_name, model_run_names in model_runs(p, b, section["methods"]).items():
                if model and model_name not in model:
                    continue
                spec = ModelSpec.from_params(model_name, p["models"][model_name])
                identity, why, local = backend_identity(spec, p["seed"], dev_answers)
                if why:
                    notes.append(
                        f"{b}/{model_name}: cache looked up by request id (the backend's identity is unknown: {why})"
                    )
                lookup = lookup_for(store, identity, model_name)
                counter = token_counter(spec)
                latency = model_latency(store, model_name, p["plan"]["latency_s"])
                for run_name in model_run_names:
                    if run and run_name not in run:
                        continue
                    method = bench.method(run_name, spec, p["seed"], bench.method_settings(section, run_name))
                    method.cache = ReplayCache(store.get if store is not None else (lambda key: None))
                    plans = [plan_instance(method, inst, lookup, counter, local) for inst in insts]
                    rows.append(
                        run_plan(
                            b,
                            model_name,
                            run_name,
                            plans,
                            counter_label=counter.describe(),
                            cache_match="none" if store is None else ("key" if identity is not None else "request_id"),
                            price=spec.price_per_mtok(),
                            latency_s=latency,
                            concurrency=max(spec.concurrency, spec.batch_size),
                        )
                    )
    finally:
        if store is not None:
            store.close()
    warnings = budget_warnings(rows, Budget.from_params(p["plan"]))
    data = json.dumps([r.as_dict() for r in rows], indent=2, sort_keys=True) + "\n"
    text = to_markdown(rows, warnings, notes)
    if out is not None:
        write_text_atomic(out, data)
    if md is not None:
        write_text_atomic(md, text)
    typer.echo(data if as_json else text, nl=False)
    for w in warnings:
        typer.echo(f"plan: warning: {w}", err=True)
