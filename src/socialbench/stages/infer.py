"""``socialbench infer``: run one model with one or more methods over the instances, in one process (one
backend and one request cache). Imports only what inference uses (not tracking, tables or the viewer)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from socialbench.core.backend import ModelSpec, create_backend
from socialbench.core.benchmarks import pair_excluded
from socialbench.core.cache import RequestCache
from socialbench.core.cache_pg import open_request_cache
from socialbench.core.config import load_params
from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.core.io import write_json, write_jsonl
from socialbench.core.paths import MediaRoots, check_io
from socialbench.core.provenance import git_commit, infer_provenance
from socialbench.core.runner import run_method
from socialbench.results.layout import run_path
from socialbench.stages.common import (
    BENCH_HELP,
    METHOD_HELP,
    PARAMS_HELP,
    TAXONOMY_HELP,
    Opt,
    load_benchmark,
    stage_app,
    subset_instances,
)

app = stage_app("Run a model over the instances.")


@dataclass(frozen=True)
class RunFiles:
    """Where one (model, method) run's files go."""

    method: str
    out: Path
    stats: Path
    trace: Path | None = None


class SharedBackend:
    """One backend for the job's methods, made once a first round is built (bad instances fail first), closed once."""

    def __init__(self, spec):
        self.spec = spec
        self.backend = None

    def __call__(self, context):
        if self.backend is None:
            self.backend = create_backend(self.spec, context)
        return self.backend

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None


@dataclass
class Job:
    """What the runs of one (benchmark, model) job share: inputs read once, one cache, one backend."""

    bench: Any
    benchmark: str
    spec: Any
    params: dict[str, Any]
    instances: list[dict[str, Any]]
    dev_instances: list[dict[str, Any]] | None
    instances_path: Path
    dev_path: Path | None
    cache: Any
    #: The subset the runs answer (``core.subset.SubsetInfo``); None: all.
    subset: Any = None
    backend: SharedBackend = field(init=False)
    commit: str = "unknown"
    progress: bool = False

    def __post_init__(self) -> None:
        self.backend = SharedBackend(self.spec)


def infer_one(job: Job, run: RunFiles, echo=typer.echo) -> None:
    """One (model, method) run with the job's cache and backend; its files written when it is a result."""
    bench, p, benchmark = job.bench, job.params, job.benchmark
    method, model = run.method, job.spec.name
    settings = bench.method_settings(p.get(benchmark) or {}, method)
    records, traces, s = run_method(
        bench,
        bench.method(method, job.spec, p["seed"], settings),
        job.instances,
        spec=job.spec,
        cache=job.cache,
        seed=p["seed"],
        dev_instances=job.dev_instances,
        backend=job.backend,
        progress=job.progress,
        source=str(job.instances_path),
        trace_pointer=run_path("traces", benchmark, model, method),  # the pipeline's path, wherever this run writes
        media_roots=MediaRoots.from_params(p),
    )
    example = next(iter(s.error_examples.items()), None)
    call_errors = s.errors - s.search_errors
    if s.requests and call_errors == s.requests:
        # Not a result: the server, key or model is wrong. A table row of zeros would look like one.
        raise SocialbenchError(
            f"models.{model}: all {s.requests} calls failed (e.g. {example[0]}: {example[1]});"
            " nothing written. Check the server, key and model id, then run again"
        )
    if s.searches and s.search_errors == s.searches:
        # The same for the searches: every looked-up entity failed, which no table should show as a result.
        raise SocialbenchError(
            f"{benchmark} {method}: all {s.searches} searches failed (e.g. {s.search_error_examples[0]});"
            " nothing written. Check the retriever's service and options, then run again"
        )
    if s.no_record and s.no_record == s.requests:
        # Recorded answers of other instances (another split, source or file): not a result either.
        raise DataError(
            str((job.spec.options or {}).get("path") or f"models.{model}.options.path"),
            f"the recorded answers of models.{model} match none of the {len(job.instances)} instances of"
            f" {job.instances_path} (e.g. no record has id {s.no_record_examples[0]!r}); nothing written."
            " Check that options.path holds the answers to these instances",
            field="id",
        )
    write_jsonl(run.out, records)
    if run.trace is not None:
        write_jsonl(run.trace, traces)
    provenance = infer_provenance(bench, method, job.instances_path, job.dev_path, settings, commit=job.commit)
    # a subset run says so in its stats (tracking logs it): absent for a full run, so its bytes stay
    subset = {"subset": job.subset.as_dict()} if job.subset is not None else {}
    write_json(run.stats, {**s.as_dict(), "provenance": provenance, **subset})
    echo(
        f"infer {model}/{method}: {s.requests} requests in {s.rounds} round(s), {s.cache_hits} cached,"
        f" {s.cache_misses} called, {s.errors} errors, {s.truncated} truncated"
        + (f"; {s.searches} searches, {s.search_cache_hits} cached, {s.search_errors} failed" if s.searches else "")
    )
    if s.no_record:
        echo(
            f"infer: warning: {s.no_record} of {len(job.instances)} instances not evaluated: the recorded answers of"
            f" models.{model} hold no record for them (no_record; e.g. {s.no_record_examples[0]}). A rerun gives the"
            " same; add their answers to the file to evaluate them",
            err=True,
        )
    if s.search_errors:
        echo(
            f"infer: warning: {s.search_errors} of {s.searches} searches failed (e.g. {s.search_error_examples[0]});"
            f" their instances are scored incorrect. Retry only them with `snakemake --forcerun {benchmark}_infer`"
            " (the rest is cached)",
            err=True,
        )
    if call_errors:
        echo(
            f"infer: warning: {call_errors} calls failed after their retries (e.g. {example[0]}: {example[1]});"
            f" they are scored incorrect. Retry only them with `snakemake --forcerun {benchmark}_infer`"
            " (the rest is cached)",
            err=True,
        )


def plan_runs(
    benchmark: str,
    model: str,
    methods: list[str],
    results_dir: Path | None,
    out: Path | None,
    stats: Path | None,
    trace: Path | None,
) -> list[RunFiles]:
    """The runs the options ask for: every method under ``--results-dir``, or one method's files."""
    if results_dir is not None:
        if out is not None or stats is not None or trace is not None:
            raise ConfigError("infer: --results-dir places every run's files; give it without --out, --stats, --trace")

        def at(kind: str, method: str) -> Path:  # as the results layout places it
            return Path(run_path(kind, benchmark, model, method, root=str(results_dir)))

        return [RunFiles(m, at("predictions", m), at("runs", m), at("traces", m)) for m in methods]
    if len(methods) != 1:
        raise ConfigError(
            f"infer: {len(methods)} --method given with --out/--stats: one run's files; give --results-dir for several"
        )
    if out is None or stats is None:
        raise ConfigError("infer: give --results-dir, or --out and --stats (and optionally --trace) of one run")
    return [RunFiles(methods[0], out, stats, trace)]


@app.command("infer")
def infer(
    instances: Path = Opt(..., help="processed instances (JSON lines)"),
    model: str = Opt(..., help="model name (a key of models: in params)"),
    benchmark: str = Opt(..., help=BENCH_HELP),
    method: list[str] = Opt(
        ["direct"], help=f"{METHOD_HELP}; repeat to run several in one process (with --results-dir)"
    ),
    results_dir: Path | None = Opt(
        None,
        help="results root: each method's predictions, traces and stats go to"
        " <kind>/<benchmark>/<model>/<method> under it (in place of --out, --stats, --trace)",
    ),
    out: Path | None = Opt(None, help="prediction records (JSON lines) of the one --method"),
    stats: Path | None = Opt(
        None, help="run accounting (JSON) of the one --method: calls, cache hits, tokens, cost, provenance"
    ),
    trace: Path | None = Opt(
        None,
        help="per-instance traces (JSON lines) of the one --method: every call's stage, cache key, text, tokens,"
        " finish reason",
    ),
    params: Path = Opt(Path("params.yaml"), help=PARAMS_HELP),
    dev: Path | None = Opt(None, help="dev split (the prior backend's statistics)"),
    taxonomy: Path | None = Opt(None, help=TAXONOMY_HELP),
    cache: Path | None = Opt(None, help="request cache (default: cache.path in params)"),
    progress: bool = Opt(True, help="show a progress bar"),
) -> None:
    """Run one model with one or more methods over the instances (one backend, every call cached)."""
    runs = plan_runs(benchmark, model, list(method), results_dir, out, stats, trace)
    check_io(
        {"--instances": instances, "--dev": dev, "--params": params, "--taxonomy": taxonomy},
        {
            "--out": [r.out for r in runs],
            "--stats": [r.stats for r in runs],
            "--trace": [r.trace for r in runs if r.trace is not None],
            "--cache": cache,
        },
    )
    bench = load_benchmark(benchmark, taxonomy)
    methods = [r.method for r in runs]
    for name in methods:
        bench.method_class(name)  # an unknown method is refused before anything is read
    p = load_params(params)
    if model not in p["models"]:
        raise SocialbenchError(f"{params}: models.{model}: no such model; known: {', '.join(p['models'])}")
    if len(set(methods)) != len(methods):
        raise ConfigError(f"infer: a --method is given twice ({', '.join(methods)})")
    for name in methods:  # a method params exclude for the model has no run
        reason = pair_excluded(p, benchmark, model, name)
        if reason is not None:
            raise ConfigError(
                f"{params}: models.{model}: {benchmark} method {name} is excluded in params ({reason});"
                " an excluded pair has no run"
            )
    spec = ModelSpec.from_params(model, p["models"][model])
    insts = bench.schema.load_instances(instances)
    if not insts:
        raise DataError(str(instances), "no records: the file is empty (or holds only blank lines); nothing to run")
    insts, subset = subset_instances(bench, insts, p, str(instances))  # params <benchmark>.subset
    dev_insts = bench.schema.load_instances(dev) if dev else None
    if dev and not dev_insts:
        raise DataError(str(dev), "the dev file has no records: it is empty (or holds only blank lines)")
    check_io({"--instances": instances, "--dev": dev}, {"cache.path in params": None if cache else p["cache"]["path"]})
    for name in methods:  # each run's settings checked (a retriever's key or corpus too) before any call
        bench.method(name, spec, p["seed"], bench.method_settings(p.get(benchmark) or {}, name))
    # --cache names a file; else SOCIALBENCH_CACHE_URL (a shared PostgreSQL store), else cache.path in params.
    store = (
        RequestCache(cache)
        if cache
        else open_request_cache(p["cache"]["path"], connect_timeout_s=p["waits"]["connect_s"])
    )
    job = Job(bench, benchmark, spec, p, insts, dev_insts, instances, dev, store, subset)
    job.commit = git_commit()
    job.progress = progress and sys.stderr.isatty()
    try:
        for run in runs:
            infer_one(job, run)
    finally:
        job.backend.close()
        job.cache.close()
