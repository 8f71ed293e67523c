"""The ``socialbench`` command: one sub-command per pipeline stage, each with explicit paths, so
every stage runs on its own as well as from Snakemake's rules."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import typer

from socialbench.core.errors import SocialbenchError
from socialbench.core.io import write_json, write_text_atomic

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    help="socialbench: MoCA and MeetingToM pipelines.",
)

Opt = typer.Option


def _benchmark(name: str, taxonomy: Path | None = None):
    """The benchmark plug-in named by --benchmark (ConfigError listing the registered ones)."""
    from socialbench.core.benchmarks import get_benchmark

    return get_benchmark(name, {"taxonomy": taxonomy})


def _choices() -> tuple[str, str]:
    """--benchmark's and --method's help, listing their choices (the registered benchmarks, each one's
    methods); the plain wording if a plug-in cannot be loaded, so --help never fails."""
    from socialbench.core.benchmarks import available_benchmarks, get_benchmark

    try:
        names = available_benchmarks()
        methods = "; ".join(f"{n}: {', '.join(get_benchmark(n).method_names())}" for n in names)
    except Exception:  # noqa: BLE001 (a broken plug-in is reported by the command that uses it)
        return (
            "benchmark (a registered plug-in; `socialbench benchmarks` lists them)",
            "a method of the benchmark (`socialbench benchmarks` lists them)",
        )
    return f"benchmark, one of: {', '.join(names)}", f"a method of the benchmark, one of ({methods})"


BENCH_HELP, METHOD_HELP = _choices()
TAXONOMY_HELP = "MoCA: a taxonomy file (YAML/JSON) in place of the built-in one"


@app.command("check-params")
def check_params(params: Path = Opt(Path("params.yaml"), help="params file to validate")) -> None:
    """Validate params.yaml against its schema and print it with defaults filled."""
    from socialbench.core.config import load_params

    typer.echo(json.dumps(load_params(params), indent=2, sort_keys=True))


@app.command("benchmarks")
def benchmarks() -> None:
    """List the registered benchmarks with their methods."""
    from socialbench.core.benchmarks import available_benchmarks, get_benchmark

    for name in available_benchmarks():
        bench = get_benchmark(name)
        typer.echo(f"{name}: methods {', '.join(bench.method_names()) or '(none)'}")


@app.command("demo")
def demo(
    params: Path = Opt(Path("params.yaml"), help="params file (seed and the benchmark's demo settings)"),
    out_dir: Path = Opt(Path("data/raw/moca_demo"), help="where the demo's raw files go"),
    benchmark: str = Opt("moca", help=BENCH_HELP),
) -> None:
    """Generate a benchmark's embedded demo data (deterministic from the seed)."""
    from socialbench.core.config import load_params
    from socialbench.core.paths import check_io

    check_io({"--params": params}, {"--out-dir": out_dir}, folders=("--out-dir",))
    bench = _benchmark(benchmark)
    if not hasattr(bench, "demo"):
        raise SocialbenchError(f"benchmark {benchmark!r} has no embedded demo")
    recs = bench.demo(load_params(params), out_dir)
    typer.echo(f"demo: {', '.join(f'{k}={len(v)}' for k, v in recs.items())} instances in {out_dir}")


@app.command("prepare")
def prepare(
    raw: Path = Opt(..., help="raw instances (JSON lines)"),
    out: Path = Opt(..., help="validated instances (JSON lines)"),
    report: Path = Opt(..., help="dropped records with their reasons (JSON lines)"),
    benchmark: str = Opt("moca", help=BENCH_HELP),
    taxonomy: Path | None = Opt(None, help=TAXONOMY_HELP),
    on_invalid: str = Opt("drop", help="drop: leave bad records out and report them; fail: stop"),
    params: Path = Opt(Path("params.yaml"), help="params file (media.allowed_roots: where media may be besides data/)"),
) -> None:
    """Validate raw instances (schema, taxonomy, media present, inside the data folders and images
    decodable); keep good ones, report the rest. An empty input, or one of which no record is kept,
    is an error (after the report of what was dropped is written)."""
    from socialbench.core.config import load_params
    from socialbench.core.errors import DataError
    from socialbench.core.io import write_jsonl
    from socialbench.core.paths import MediaRoots, check_io

    check_io({"--raw": raw, "--taxonomy": taxonomy, "--params": params}, {"--out": out, "--report": report})
    if on_invalid not in ("drop", "fail"):
        raise SocialbenchError(f"--on-invalid {on_invalid!r}: must be one of drop, fail")
    bench = _benchmark(benchmark, taxonomy)
    bench.options["media_roots"] = MediaRoots.from_params(load_params(params))  # media paths relative to here
    if not hasattr(bench, "prepare"):
        raise SocialbenchError(f"benchmark {benchmark!r} has no prepare stage")
    kept, dropped = bench.prepare(raw, on_invalid)
    write_jsonl(report, dropped)
    if not kept:
        raise DataError(str(raw), f"no record passed validation: all {len(dropped)} were dropped (reasons in {report})")
    write_jsonl(out, kept)
    typer.echo(f"prepare: kept {len(kept)}, dropped {len(dropped)} (see {report})")


@app.command("infer")
def infer(
    instances: Path = Opt(..., help="processed instances (JSON lines)"),
    model: str = Opt(..., help="model name (a key of models: in params)"),
    out: Path = Opt(..., help="prediction records (JSON lines)"),
    stats: Path = Opt(..., help="run accounting (JSON): calls, cache hits, tokens, cost, provenance"),
    trace: Path | None = Opt(
        None, help="per-instance traces (JSON lines): every call's stage, cache key, text, tokens, finish reason"
    ),
    method: str = Opt("direct", help=METHOD_HELP),
    params: Path = Opt(
        Path("params.yaml"), help="the params file (params.yaml: models, seed and the stage's settings)"
    ),
    dev: Path | None = Opt(None, help="dev split (the prior backend's statistics)"),
    benchmark: str = Opt("moca", help=BENCH_HELP),
    taxonomy: Path | None = Opt(None, help=TAXONOMY_HELP),
    cache: Path | None = Opt(None, help="request cache (default: cache.path in params)"),
    progress: bool = Opt(True, help="show a progress bar"),
) -> None:
    """Run one model with one method over the instances; every call goes through the request cache."""
    from socialbench.core.backend import ModelSpec
    from socialbench.core.benchmarks import excluded
    from socialbench.core.cache import RequestCache
    from socialbench.core.config import load_params
    from socialbench.core.errors import DataError
    from socialbench.core.io import write_jsonl
    from socialbench.core.paths import check_io
    from socialbench.core.runner import run_method

    check_io(
        {"--instances": instances, "--dev": dev, "--params": params, "--taxonomy": taxonomy},
        {"--out": out, "--stats": stats, "--trace": trace, "--cache": cache},
    )
    bench = _benchmark(benchmark, taxonomy)
    bench.method_class(method)  # an unknown method is refused before anything is read
    p = load_params(params)
    if model not in p["models"]:
        raise SocialbenchError(f"{params}: models.{model}: no such model; known: {', '.join(p['models'])}")
    spec = ModelSpec.from_params(model, p["models"][model])
    insts = bench.load_instances(instances)
    if not insts:
        raise DataError(str(instances), "no records: the file is empty (or holds only blank lines); nothing to run")
    dev_insts = bench.load_instances(dev) if dev else None
    if dev and not dev_insts:
        raise DataError(str(dev), "the dev file has no records: it is empty (or holds only blank lines)")
    settings = bench.method_settings(p.get(benchmark) or {}, method)
    reason = excluded(p["models"][model], benchmark, method)
    if reason is not None:
        # Excluded in params: no model is called; every record says so (scored invalid), and the
        # tables show the reason instead of a row.
        records, traces, run_stats = excluded_run(bench, method, spec, insts, reason)
    else:
        check_io(
            {"--instances": instances, "--dev": dev}, {"cache.path in params": None if cache else p["cache"]["path"]}
        )
        rc = RequestCache(cache or p["cache"]["path"])
        try:
            records, traces, run_stats = run_method(
                bench,
                bench.method(method, spec, p["seed"], settings),
                insts,
                spec=spec,
                cache=rc,
                seed=p["seed"],
                dev_instances=dev_insts,
                progress=progress and sys.stderr.isatty(),
                source=str(instances),
            )
        finally:
            rc.close()
    s = run_stats
    example = next(iter(s.error_examples.items()), None)
    if s.requests and s.errors == s.requests:
        # Not a result: the server, key or model is wrong. A table row of zeros would look like one.
        raise SocialbenchError(
            f"models.{model}: all {s.requests} calls failed (e.g. {example[0]}: {example[1]});"
            " nothing written. Check the server, key and model id, then run again"
        )
    write_jsonl(out, records)
    if trace is not None:
        write_jsonl(trace, traces)
    write_json(stats, {**run_stats.as_dict(), "provenance": infer_provenance(bench, method, instances, dev, settings)})
    typer.echo(
        f"infer {model}/{method}: {s.requests} requests in {s.rounds} round(s), {s.cache_hits} cached,"
        f" {s.cache_misses} called, {s.errors} errors, {s.truncated} truncated"
    )
    if s.errors:
        typer.echo(
            f"infer: warning: {s.errors} calls failed after their retries (e.g. {example[0]}: {example[1]}); they are"
            f" scored incorrect. Retry only them with `snakemake --forcerun {benchmark}_infer` (the rest is cached)",
            err=True,
        )


def excluded_run(bench, method: str, spec, insts: list, reason: str):
    from socialbench.core.benchmarks import Final
    from socialbench.core.runner import RunStats

    error = f"excluded in params (models.{spec.name}): {reason}"
    records = sorted(
        (bench.prediction_record(i, Final(error=error), model=spec.name, method=method) for i in insts),
        key=lambda r: r["id"],
    )
    traces = [
        {"id": r["id"], "model": spec.name, "method": method, "calls": [], "final": {"fields": {}, "error": error}}
        for r in records
    ]
    return records, traces, RunStats(excluded=reason)


def made_with(run_stats: dict, stats_path: Path, data_hash: str, instances: Path) -> dict:
    """infer's provenance record from a stats file, checked: present, complete, and made from the
    instances being tracked."""
    from socialbench.core.errors import DataError

    made = run_stats.get("provenance")
    keys = ("prompt_template_sha256", "instances_sha256", "dev_sha256", "git_commit", "versions")
    if not isinstance(made, dict) or any(k not in made for k in keys) or not isinstance(made["versions"], dict):
        raise DataError(
            str(stats_path),
            "no complete record of what the predictions were made with (an older"
            " socialbench infer wrote it); rerun the inference",
            field="provenance",
        )
    if made["instances_sha256"] != data_hash:
        raise DataError(
            str(stats_path),
            f"the predictions were made from other instances than {instances} (sha256 differs); rerun the inference",
            field="provenance.instances_sha256",
        )
    return made


def infer_provenance(bench, method: str, instances: Path, dev: Path | None, settings: dict | None = None) -> dict:
    """What the predictions depend on, taken when they are made (not when they are tracked): the
    benchmark's own record (prompt templates, taxonomy...), the input files, code commit and
    package versions."""
    from socialbench.core.hashing import sha256_file, sha256_json
    from socialbench.report.tracking import git_commit, package_versions

    return {
        **bench.provenance(method),
        "method_settings_sha256": sha256_json(settings or {}),
        "instances_sha256": sha256_file(instances),
        "dev_sha256": sha256_file(dev) if dev else None,
        "git_commit": git_commit(),
        "versions": package_versions(),
    }


@app.command("score")
def score(
    instances: Path = Opt(..., help="the processed instances the predictions were made for (JSON lines)"),
    predictions: Path = Opt(..., help="prediction records written by infer (JSON lines)"),
    out: Path = Opt(..., help="scores (JSON): {group: {metric: value, n}}"),
    benchmark: str = Opt("moca", help=BENCH_HELP),
    taxonomy: Path | None = Opt(None, help=TAXONOMY_HELP),
    model: str | None = Opt(None, help="the model every record must be of (default: the first record's)"),
    method: str | None = Opt(None, help="the method every record must be of (default: the first record's)"),
) -> None:
    """Score predictions with the benchmark's metrics (MoCA: section 3.3, per scenario). Instances
    without a prediction are scored incorrect and invalid (a line on stderr says how many), and so
    are records whose `error` is set. Every record must be of one model and method."""
    from socialbench.core.errors import DataError
    from socialbench.core.io import first_bad_line, read_jsonl_lines
    from socialbench.core.paths import check_io

    check_io({"--instances": instances, "--predictions": predictions, "--taxonomy": taxonomy}, {"--out": out})
    bench = _benchmark(benchmark, taxonomy)
    insts = bench.load_instances(instances)
    if not insts:
        raise DataError(str(instances), "no instances (the file is empty): nothing to score")
    parsed = read_jsonl_lines(predictions)
    first_bad_line(predictions, parsed)
    preds = [jl.record for jl in parsed]
    lines = [jl.line for jl in parsed]  # the file line of each record, for errors naming it
    one_run(preds, lines, str(predictions), model, method)
    result = bench.score(insts, preds, source=str(predictions), lines=lines, instances_source=str(instances))
    ids = {p.get("id") for p in preds}
    missing = [g["id"] for g in insts if g["id"] not in ids]
    if missing:
        typer.echo(
            f"score: warning: {len(missing)} of {len(insts)} instances have no prediction in {predictions}"
            f" (scored incorrect and invalid), e.g. {missing[0]}",
            err=True,
        )
    failed = [p for p in preds if p.get("error")]
    if failed:
        from socialbench.core.io import brief

        typer.echo(
            f"score: warning: {len(failed)} record(s) in {predictions} have `error` set (scored invalid),"
            f" e.g. {failed[0].get('id')}: {brief(failed[0]['error'], 120)}",
            err=True,
        )
    write_json(out, result)
    typer.echo(f"score: {out}")


def one_run(preds: list[dict], lines: list[int], source: str, model: str | None, method: str | None) -> None:
    """Every prediction record is of one model and one method (``--model``/``--method`` when given,
    else the first record's): records of another run mixed into a file would be scored as this
    one's. DataError naming the file, line and field."""
    from socialbench.core.errors import DataError
    from socialbench.core.io import brief

    if not preds:
        return
    for key, wanted in (("model", model), ("method", method)):
        expected = wanted if wanted is not None else preds[0].get(key)
        whose = (
            f"--{key} {wanted}"
            if wanted is not None
            else f"line {lines[0]}'s {brief(expected if expected is not None else 'none')}"
        )
        for rec, line in zip(preds, lines):
            if rec.get(key) != expected:
                got = brief(rec[key]) if key in rec else "none"
                raise DataError(
                    source,
                    f"a record of {key} {got}, not {whose}: a predictions file holds one run's"
                    " records (score them separately)",
                    record=f"line {line}",
                    field=key,
                )


@app.command("tables")
def tables(
    scores: list[Path] = typer.Argument(..., help="score files results/scores/<benchmark>/<model>/<method>.json"),
    out_dir: Path = Opt(..., help="tables go here (MoCA: <scenario>.md/.csv/.tex and all.md)"),
    headline: Path = Opt(
        ...,
        help="headline metrics JSON of every run; one file per run goes in the folder of the"
        " same name without .json (<model>/<method>.json: `dvc metrics show` rows)",
    ),
    params: Path = Opt(
        Path("params.yaml"), help="the params file (params.yaml: models, seed and the stage's settings)"
    ),
    benchmark: str = Opt("moca", help=BENCH_HELP),
    instances: Path | None = Opt(
        None,
        help="the scored instances; with --predictions-dir, per-instance statistics"
        " (MoCA: 95% bootstrap intervals, paired tests)",
    ),
    predictions_dir: Path | None = Opt(None, help="results/predictions/<benchmark> (with --instances)"),
) -> None:
    """Render the benchmark's result tables (and figures) and the headline metrics file."""
    from socialbench.core.config import load_params
    from socialbench.core.errors import ConfigError, DataError
    from socialbench.core.io import read_jsonl, write_bytes_atomic
    from socialbench.core.paths import check_io
    from socialbench.report.results import read_score_files

    check_io(
        {"SCORES": scores, "--params": params, "--instances": instances, "--predictions-dir": predictions_dir},
        {"--out-dir": out_dir, "--headline": headline},
        folders=("--out-dir", "--predictions-dir"),
    )
    bench = _benchmark(benchmark)
    p = load_params(params)
    if (instances is None) != (predictions_dir is None):
        raise ConfigError("tables: --instances and --predictions-dir go together (per-instance statistics need both)")
    # Every score file is read and checked, and every output rendered, before anything is written:
    # a bad input never leaves a partial set of tables.
    loaded = read_score_files(bench, scores, p, params)
    per_instance = {}
    if instances is not None and bench.tables_per_instance:
        preds = {}
        for model, method in loaded:
            path = predictions_dir / model / f"{method}.jsonl"
            if not path.is_file():
                raise DataError(
                    str(path), f"predictions of {model}/{method} not found (--predictions-dir {predictions_dir})"
                )
            preds[(model, method)] = (str(path), read_jsonl(path))
        per_instance = {"instances": bench.load_instances(instances), "predictions": preds}
    files, head = bench.tables(loaded, p, **per_instance)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        if isinstance(content, bytes):  # a figure
            write_bytes_atomic(out_dir / name, content)
        else:
            write_text_atomic(out_dir / name, content)
    write_json(headline, head)
    # `dvc metrics show`: one file, so one row, per (model, method) in <headline without .json>/
    from socialbench.report.results import write_run_metrics

    write_run_metrics(headline.with_suffix(""), head)
    typer.echo(f"tables: {len(files)} file(s) in {out_dir}")


@app.command("viewer")
def viewer(
    instances: Path = Opt(..., help="the instances the run was made for (JSON lines)"),
    predictions: Path = Opt(..., help="the run's prediction records (JSON lines)"),
    out: Path = Opt(..., help="the page (HTML; results/viewer/<benchmark>/<model>/<method>.html)"),
    traces: Path | None = Opt(None, help="the run's traces (JSON lines): calls and what the method keeps"),
    benchmark: str = Opt("moca", help=BENCH_HELP),
    taxonomy: Path | None = Opt(None, help=TAXONOMY_HELP),
    media_root: Path = Opt(Path("."), help="relative media paths of the instances are read under this folder"),
    thumb_px: int = Opt(256, help="longest side of embedded images (pixels)"),
    frame_px: int = Opt(160, help="longest side of embedded video frames (pixels)"),
    max_frames: int = Opt(8, help="frames shown per video instance (evenly spread)"),
) -> None:
    """Write one self-contained HTML page of a run: per instance its media, text, gold and predicted
    fields (wrong ones marked), calls and method trace, with filters (no server needed)."""
    from socialbench.core.paths import check_io
    from socialbench.report.viewer import build_page

    check_io(
        {"--instances": instances, "--predictions": predictions, "--traces": traces, "--taxonomy": taxonomy},
        {"--out": out},
    )
    page = build_page(
        _benchmark(benchmark, taxonomy),
        instances,
        predictions,
        traces,
        media_root=media_root,
        thumb_px=thumb_px,
        frame_px=frame_px,
        max_frames=max_frames,
    )
    write_text_atomic(out, page.html)
    typer.echo(f"viewer: {page.rows} instances in {out} ({len(page.html.encode('utf-8')) // 1024} KiB)")
    if page.problems:
        typer.echo(
            f"viewer: warning: {len(page.problems)} media file(s) not shown or changed, marked in the page"
            f" (e.g. {page.problems[0]})",
            err=True,
        )


@app.command("prune-outputs")
def prune_outputs(
    benchmark: str = Opt(..., help=BENCH_HELP),
    params: Path = Opt(Path("params.yaml"), help="the params whose models and <benchmark>.methods are kept"),
    results: Path = Opt(Path("results"), help="the results root holding <kind>/<benchmark>/<model>/<method>.*"),
    archive: Path | None = Opt(None, help="move stale outputs here (same relative paths) instead of deleting them"),
    report: Path | None = Opt(None, help="append one JSON line per pruned path (path, reason, action) here"),
) -> None:
    """Remove (or archive) the per-run outputs of models and methods params no longer name."""
    from socialbench.report.prune import RUN_KINDS
    from socialbench.report.prune import prune_outputs as prune
    from socialbench.core.config import load_params
    from socialbench.core.io import jsonl_text

    _benchmark(benchmark)  # an unknown benchmark is a ConfigError listing the registered ones
    pruned = prune(results, benchmark, load_params(params), archive)
    for rec in pruned:
        typer.echo(f"prune-outputs: {rec['path']}: {rec['reason']} ({rec['action']})")
    if pruned and report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        with report.open("a", encoding="utf-8") as fh:
            fh.write(jsonl_text(pruned))
    typer.echo(f"prune-outputs: {len(pruned)} stale path(s) of {benchmark} in {results}/{{{','.join(RUN_KINDS)}}}")


@app.command("prune-lock")
def prune_lock(
    repo: Path = Opt(Path("."), help="the DVC repository whose dvc.lock is pruned"),
) -> None:
    """Drop the dvc.lock entries of stages dvc.yaml no longer defines (a model or method removed from params)."""
    from socialbench.report.prune import prune_lock as prune

    dropped = prune(repo)
    for name in dropped:
        typer.echo(f"prune-lock: dropped {name} (no longer in dvc.yaml)")
    typer.echo(f"prune-lock: {len(dropped)} stale stage(s) dropped from {repo / 'dvc.lock'}")


@app.command("track")
def track(
    scores: list[Path] = typer.Argument(..., help="score files results/scores/<benchmark>/<model>/<method>.json"),
    instances: Path = Opt(..., help="the scored instances (their hash is recorded)"),
    predictions_dir: Path = Opt(..., help="results/predictions/<bench>"),
    stats_dir: Path = Opt(..., help="results/runs/<bench> (run accounting written by infer)"),
    tables_dir: Path = Opt(..., help="results/tables/<bench>"),
    out: Path = Opt(..., help="summary of logged runs (JSON)"),
    traces_dir: Path | None = Opt(
        None, help="results/traces/<bench> (per-instance traces written by infer; logged as artifacts)"
    ),
    viewer_dir: Path | None = Opt(
        None, help="results/viewer/<bench> (each run's trace viewer page; logged as an artifact)"
    ),
    params: Path = Opt(
        Path("params.yaml"), help="the params file (params.yaml: models, seed and the stage's settings)"
    ),
    benchmark: str = Opt("moca", help=BENCH_HELP),
) -> None:
    """Log one MLflow run per (benchmark, model, method) under a parent run; unchanged ones are skipped."""
    from socialbench.core.config import load_params
    from socialbench.core.errors import DataError
    from socialbench.core.hashing import sha256_file, sha256_json
    from socialbench.core.paths import check_io
    from socialbench.report.results import read_score_files
    from socialbench.report.tracking import eval_key, git_commit, log_evaluations, parse_stats, pipeline_artifact_files

    check_io(
        {
            "SCORES": scores,
            "--instances": instances,
            "--params": params,
            "--predictions-dir": predictions_dir,
            "--stats-dir": stats_dir,
            "--tables-dir": tables_dir,
            "--traces-dir": traces_dir,
            "--viewer-dir": viewer_dir,
        },
        {"--out": out},
        folders=("--predictions-dir", "--stats-dir", "--tables-dir", "--traces-dir", "--viewer-dir"),
    )
    bench = _benchmark(benchmark)
    p = load_params(params)
    # Every input is found, read and checked before MLflow is touched: a bad one stops the command
    # with its name and nothing logged, never a half-logged run.
    if not instances.is_file():
        raise DataError(str(instances), "instances file not found (--instances)")
    if not tables_dir.is_dir():
        raise DataError(str(tables_dir), "tables folder not found (--tables-dir; socialbench tables writes it)")
    tables = sorted(t for t in tables_dir.glob("*.*") if t.is_file())
    if not tables:
        raise DataError(
            str(tables_dir), "no tables in the tables folder (--tables-dir; socialbench tables writes them)"
        )
    loaded = read_score_files(bench, scores, p, params)
    data_hash = sha256_file(instances)
    provenance = {"git_commit": git_commit()}
    evaluations = []
    for path in scores:
        model, method = path.parent.name, path.stem
        pred = predictions_dir / model / f"{method}.jsonl"
        stats_path = stats_dir / model / f"{method}.stats.json"
        if not pred.is_file():
            raise DataError(str(pred), f"predictions file of {path} not found (--predictions-dir {predictions_dir})")
        if not stats_path.is_file():
            raise DataError(
                str(stats_path), f"run accounting of {path} not found (--stats-dir {stats_dir}; infer writes it)"
            )
        entry = p["models"][model]
        run_stats = parse_stats(stats_path.read_bytes(), str(stats_path))
        if run_stats.get("excluded"):
            continue  # excluded in params: nothing was run, so there is no evaluation to log
        trace = traces_dir / model / f"{method}.jsonl" if traces_dir is not None else None
        if trace is not None and not trace.is_file():
            raise DataError(str(trace), f"trace file of {path} not found (--traces-dir {traces_dir}; infer writes it)")
        page = viewer_dir / model / f"{method}.html" if viewer_dir is not None else None
        if page is not None and not page.is_file():
            raise DataError(
                str(page), f"viewer page of {path} not found (--viewer-dir {viewer_dir}; socialbench viewer writes it)"
            )
        made = made_with(run_stats, stats_path, data_hash, instances)
        identity = run_stats.get("backend_identity") or {}
        evaluations.append(
            {
                "benchmark": benchmark,
                "model": model,
                "method": method,
                "params": {
                    "model": model,
                    "backend": entry.get("backend"),
                    "method": method,
                    "seed": p["seed"],
                    "model_id": identity.get("model_id", entry.get("model_id")),
                    "model_revision": entry.get("revision") or identity.get("revision"),
                    "model_config_sha256": sha256_json(entry),
                    "backend_identity_sha256": sha256_json(identity) if identity else None,
                },
                # As they were when the predictions were made (infer's record), not as they are now.
                "content": {
                    "dataset_sha256": data_hash,
                    "dev_sha256": made["dev_sha256"],
                    # the benchmark's own record (MoCA: prompt_template_sha256, taxonomy_sha256)
                    **{
                        k: v
                        for k, v in made.items()
                        if k.endswith("_sha256") and k not in ("instances_sha256", "dev_sha256")
                    },
                    "predictions_sha256": sha256_file(pred),
                    "scores_sha256": sha256_file(path),
                },
                "provenance": {
                    **provenance,
                    "infer_git_commit": made["git_commit"],
                    **{f"version.{k}": v for k, v in sorted(made["versions"].items())},
                },
                "scores": loaded[(model, method)],
                "stats": run_stats,
                "category": entry.get("category"),
                # logged under <benchmark>/<model>/<method>/ with names that say what they are
                "artifacts": [
                    (pred, "predictions.jsonl"),
                    (path, "scores.json"),
                    (stats_path, "run_accounting.json"),
                    *([(trace, "traces.jsonl")] if trace else []),
                    *([(page, "viewer.html")] if page else []),
                    *[(t, f"tables/{t.name}") for t in tables],
                ],
            }
        )
    # Every table and figure (with the folder it has under the tables folder) is also an artifact of the parent run.
    pipeline_files = pipeline_artifact_files(tables_dir)
    summary = log_evaluations(
        evaluations,
        p["mlflow"]["tracking_uri"],
        p["mlflow"]["experiment"],
        Path("mlartifacts"),
        artifacts=pipeline_files,
    )
    write_json(
        out,
        {
            "evaluations": sorted(f"{e['model']}/{e['method']}" for e in evaluations),
            "keys": sorted(eval_key(e) for e in evaluations),
        },
    )
    typer.echo(f"track: {len(summary['new'])} new run(s), {len(summary['existing'])} unchanged")


from socialbench.stages.book import book  # noqa: E402  (the `socialbench book` command: the results book PDF)

app.command("book")(book)

from socialbench.stages.cache import cache_app  # noqa: E402  (the `socialbench cache` commands)

app.add_typer(cache_app, name="cache")

from socialbench.media.cli import media_app  # noqa: E402  (the `socialbench media` commands)

app.add_typer(media_app, name="media")


def _mount_benchmark_commands() -> None:
    """A benchmark's own commands (``socialbench/<name>/cli.py``'s ``app``) as ``socialbench <name> ...``."""
    from importlib import resources

    from socialbench.core.benchmarks import available_benchmarks

    for name in available_benchmarks():
        if resources.files("socialbench").joinpath(name, "cli.py").is_file():
            mod = importlib.import_module(f"socialbench.{name}.cli")
            sub = getattr(mod, "app", None) or getattr(mod, f"{name}_app")
            app.add_typer(sub, name=name)


_mount_benchmark_commands()


@app.command("ui")
def ui(
    params: Path = Opt(
        Path("params.yaml"), help="the params file naming the tracking store (mlflow.tracking_uri) and experiment"
    ),
    port: int = Opt(5000, help="port of the UI on HOST"),
    host: str = Opt("127.0.0.1", help="address to serve the UI on (127.0.0.1: this machine only)"),
) -> None:
    """Open the MLflow UI on this repository's tracking store (telemetry off); prints the address of
    the experiment's runs table, where the UI lands."""
    import os

    from socialbench.core.config import load_params
    from socialbench.report.tracking import runs_page_url

    p = load_params(params)
    os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"
    os.environ["DO_NOT_TRACK"] = "true"
    url = runs_page_url(p["mlflow"]["tracking_uri"], p["mlflow"]["experiment"], f"http://{host}:{port}")
    cmd = ["mlflow", "ui", "--backend-store-uri", p["mlflow"]["tracking_uri"], "--host", host, "--port", str(port)]
    typer.echo(" ".join(cmd))
    typer.echo(f"runs: {url}")
    os.execvp(cmd[0], cmd)


def main() -> None:
    try:
        app()
    except SocialbenchError as exc:
        from socialbench.core.io import one_line

        typer.echo(f"error: {one_line(exc)}", err=True)  # one line, capped (a value may be megabytes)
        sys.exit(2)
    except OSError as exc:
        # A path that cannot be read or written (missing, a folder, no permission, no space): the
        # user's to fix, so one line naming it, not a traceback.
        from socialbench.core.paths import is_disk_full

        if exc.filename is None and is_disk_full(exc):
            typer.echo(f"error: no space left on the device ({exc.strerror}); free some space and run again", err=True)
            sys.exit(2)
        if exc.filename is None:
            raise
        where = f"{exc.filename} -> {exc.filename2}" if exc.filename2 else str(exc.filename)
        typer.echo(f"error: {where}: {exc.strerror or exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
