"""The ``socialbench`` command: one sub-command per pipeline stage, each with explicit paths, so
every stage runs on its own as well as from Snakemake's rules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from socialbench.errors import SocialbenchError
from socialbench.io import write_json, write_text_atomic

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False,
                  help="socialbench: MoCA and MeetingToM pipelines.")

Opt = typer.Option


def _benchmark(value: str) -> str:
    if value != "moca":
        raise SocialbenchError(f"--benchmark {value!r}: only 'moca' is implemented so far")
    return value


@app.command("check-params")
def check_params(params: Path = Opt(Path("params.yaml"), help="params file to validate")) -> None:
    """Validate params.yaml against its schema and print it with defaults filled."""
    from socialbench.config import load_params

    typer.echo(json.dumps(load_params(params), indent=2, sort_keys=True))


@app.command("demo")
def demo(
    params: Path = Opt(Path("params.yaml"), help="params file (seed, demo section)"),
    out_dir: Path = Opt(Path("data/raw/moca_demo"), help="where test.jsonl, dev.jsonl and media/ go"),
) -> None:
    """Generate the embedded MoCA-format demo benchmark (deterministic from the seed)."""
    from socialbench.config import load_params
    from socialbench.moca.demo import DemoConfig, generate
    from socialbench.taxonomy import load_taxonomy

    recs = generate(out_dir, DemoConfig.from_params(load_params(params)), load_taxonomy())
    typer.echo(f"demo: {', '.join(f'{k}={len(v)}' for k, v in recs.items())} instances in {out_dir}")


@app.command("prepare")
def prepare(
    raw: Path = Opt(..., help="raw instances (JSON lines)"),
    out: Path = Opt(..., help="validated instances (JSON lines)"),
    report: Path = Opt(..., help="dropped records with their reasons (JSON lines)"),
    benchmark: str = Opt("moca"),
    taxonomy: Optional[Path] = Opt(None, help="taxonomy file in place of the built-in one"),
    on_invalid: str = Opt("drop", help="drop: leave bad records out and report them; fail: stop"),
) -> None:
    """Validate raw instances (schema, taxonomy, media present and images decodable); keep good ones,
    report the rest. An empty input, or one of which no record is kept, is an error (after the
    report of what was dropped is written)."""
    from socialbench.errors import DataError
    from socialbench.io import write_jsonl
    from socialbench.moca.prepare import check_on_invalid, prepare_file
    from socialbench.taxonomy import load_taxonomy

    _benchmark(benchmark)
    check_on_invalid(on_invalid)
    kept, dropped = prepare_file(raw, load_taxonomy(taxonomy), on_invalid)
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
    stats: Path = Opt(..., help="run accounting (JSON): calls, cache hits, tokens, cost"),
    method: str = Opt("direct"),
    params: Path = Opt(Path("params.yaml")),
    dev: Optional[Path] = Opt(None, help="dev split (the prior backend's statistics)"),
    benchmark: str = Opt("moca"),
    taxonomy: Optional[Path] = Opt(None),
    cache: Optional[Path] = Opt(None, help="request cache (default: cache.path in params)"),
    progress: bool = Opt(True, help="show a progress bar"),
) -> None:
    """Run one model with one method over the instances; every call goes through the request cache."""
    from socialbench.backends.base import ModelSpec
    from socialbench.cache import RequestCache
    from socialbench.config import load_params
    from socialbench.errors import DataError
    from socialbench.moca.infer import check_method, predict
    from socialbench.io import write_jsonl
    from socialbench.moca.schema import EMPTY, load_instances
    from socialbench.taxonomy import load_taxonomy

    _benchmark(benchmark)
    check_method(method)
    p = load_params(params)
    if model not in p["models"]:
        raise SocialbenchError(f"{params}: models.{model}: no such model; known: {', '.join(p['models'])}")
    tax = load_taxonomy(taxonomy)
    spec = ModelSpec.from_params(model, p["models"][model])
    insts = load_instances(instances, tax)
    if not insts:
        raise DataError(str(instances), f"{EMPTY}; nothing to run")
    dev_insts = load_instances(dev, tax) if dev else None
    if dev and not dev_insts:
        raise DataError(str(dev), "the dev file has no records: it is empty (or holds only blank lines)")
    rc = RequestCache(cache or p["cache"]["path"])
    try:
        records, run_stats = predict(insts, spec=spec, method=method, tax=tax, seed=p["seed"], cache=rc,
                                     dev_instances=dev_insts, progress=progress and sys.stderr.isatty(),
                                     source=str(instances))
    finally:
        rc.close()
    s = run_stats
    example = next(iter(s.error_examples.items()), None)
    if s.requests and s.errors == s.requests:
        # Not a result: the server, key or model is wrong. A table row of zeros would look like one.
        raise SocialbenchError(f"models.{model}: all {s.requests} calls failed (e.g. {example[0]}: {example[1]});"
                               " nothing written. Check the server, key and model id, then run again")  # fmt: skip
    write_jsonl(out, records)
    write_json(stats, {**run_stats.as_dict(), "provenance": infer_provenance(method, tax, instances, dev)})
    typer.echo(f"infer {model}/{method}: {s.requests} requests, {s.cache_hits} cached, {s.cache_misses} called, {s.errors} errors")
    if s.errors:
        typer.echo(f"infer: warning: {s.errors} calls failed after their retries (e.g. {example[0]}: {example[1]}); they are"
                   " scored incorrect. Retry only them with `snakemake --forcerun moca_infer` (the rest is cached)", err=True)  # fmt: skip


def made_with(run_stats: dict, stats_path: Path, data_hash: str, instances: Path) -> dict:
    """infer's provenance record from a stats file, checked: present, complete, and made from the
    instances being tracked."""
    from socialbench.errors import DataError

    made = run_stats.get("provenance")
    keys = ("prompt_template_sha256", "taxonomy_sha256", "instances_sha256", "dev_sha256", "git_commit", "versions")
    if not isinstance(made, dict) or any(k not in made for k in keys) or not isinstance(made["versions"], dict):
        raise DataError(str(stats_path), "no complete record of what the predictions were made with (an older"
                        " socialbench infer wrote it); rerun the inference", field="provenance")  # fmt: skip
    if made["instances_sha256"] != data_hash:
        raise DataError(str(stats_path), f"the predictions were made from other instances than {instances}"
                        " (sha256 differs); rerun the inference", field="provenance.instances_sha256")  # fmt: skip
    return made


def infer_provenance(method: str, tax, instances: Path, dev: Path | None) -> dict:
    """What the predictions depend on, taken when they are made (not when they are tracked): the
    prompt templates, taxonomy, input files, code commit and package versions."""
    from socialbench.hashing import sha256_file
    from socialbench.moca.prompts import prompt_hash
    from socialbench.taxonomy import taxonomy_hash
    from socialbench.tracking import git_commit, package_versions

    return {
        "prompt_template_sha256": prompt_hash(method), "taxonomy_sha256": taxonomy_hash(tax),
        "instances_sha256": sha256_file(instances), "dev_sha256": sha256_file(dev) if dev else None,
        "git_commit": git_commit(), "versions": package_versions(),
    }  # fmt: skip


@app.command("score")
def score(
    instances: Path = Opt(...),
    predictions: Path = Opt(...),
    out: Path = Opt(...),
    benchmark: str = Opt("moca"),
    taxonomy: Optional[Path] = Opt(None, help="YAML/JSON {labels: {scenario: [...]}, mechanisms: {scenario: [...]}}"),
) -> None:
    """Score predictions (MoCA section 3.3) per scenario; write {scenario: metrics} JSON. Instances
    without a prediction are scored incorrect and invalid (a line on stderr says how many)."""
    from socialbench.errors import DataError
    from socialbench.io import first_bad_line, read_jsonl_lines
    from socialbench.moca.schema import load_instances
    from socialbench.moca.scoring import score as score_fn, unpredicted
    from socialbench.taxonomy import load_taxonomy

    _benchmark(benchmark)
    tax = load_taxonomy(taxonomy)
    labels, mechanisms = tax.as_sets()
    insts = load_instances(instances, tax)
    if not insts:
        raise DataError(str(instances), "no instances (the file is empty): nothing to score")
    parsed = read_jsonl_lines(predictions)
    first_bad_line(predictions, parsed)
    preds = [jl.record for jl in parsed]
    lines = [jl.line for jl in parsed]  # the file line of each record, for errors naming it
    result = score_fn(insts, preds, labels, mechanisms, source=str(predictions), lines=lines,
                      instances_source=str(instances))
    missing = unpredicted(insts, preds)
    if missing:
        typer.echo(f"score: warning: {len(missing)} of {len(insts)} instances have no prediction in {predictions}"
                   f" (scored incorrect and invalid), e.g. {missing[0]}", err=True)
    write_json(out, result)
    typer.echo(f"score: {out}")


def read_score_files(scores: list[Path], p: dict, params: Path) -> dict:
    """{(model, method): scores} from score files results/scores/<bench>/<model>/<method>.json, each
    read and checked (moca.scoring.parse_scores) and all checked together (moca.tables.collect_scores:
    models in params, one file per model and method, the same scenarios and N)."""
    from socialbench.errors import DataError
    from socialbench.moca.scoring import parse_scores
    from socialbench.moca.tables import collect_scores

    entries = []
    for path in scores:
        if not path.is_file():
            raise DataError(str(path), "score file not found")
        entries.append((str(path), path.parent.name, path.stem, parse_scores(path.read_bytes(), str(path))))
    return collect_scores(entries, {m: e["category"] for m, e in p["models"].items()}, str(params))


@app.command("tables")
def tables(
    scores: list[Path] = typer.Argument(..., help="score files results/scores/<bench>/<model>/<method>.json"),
    out_dir: Path = Opt(..., help="tables go here as <scenario>.md/.csv/.tex"),
    headline: Path = Opt(..., help="headline metrics JSON (dvc metrics)"),
    params: Path = Opt(Path("params.yaml")),
    benchmark: str = Opt("moca"),
) -> None:
    """Render the per-scenario result tables and the headline metrics file."""
    from socialbench.config import load_params
    from socialbench.moca.tables import build_rows, to_csv, to_latex, to_markdown

    _benchmark(benchmark)
    p = load_params(params)
    categories = {m: e["category"] for m, e in p["models"].items()}
    # Every score file is read and checked, and every output rendered, before anything is written:
    # a bad input never leaves a partial set of tables.
    loaded = read_score_files(scores, p, params)
    scenarios = sorted({s for sc in loaded.values() for s in sc})
    files: dict[Path, str] = {}
    md_all = []
    for s in scenarios:
        rows = build_rows(loaded, categories, s)
        n = next((sc[s]["n"] for sc in loaded.values() if s in sc), None)
        md = to_markdown(s, rows, n)
        md_all.append(md)
        files[out_dir / f"{s}.md"] = md
        files[out_dir / f"{s}.csv"] = to_csv(rows)
        files[out_dir / f"{s}.tex"] = to_latex(s, rows)
    files[out_dir / "all.md"] = "\n".join(md_all)
    head = {f"{m}.{meth}": {s: {k: sc[s][k] for k in ("dyad", "faith", "holis")} for s in sc}
            for (m, meth), sc in sorted(loaded.items())}
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        write_text_atomic(path, text)
    write_json(headline, head)
    typer.echo(f"tables: {len(scenarios)} scenarios in {out_dir}")


@app.command("track")
def track(
    scores: list[Path] = typer.Argument(..., help="score files results/scores/<bench>/<model>/<method>.json"),
    instances: Path = Opt(..., help="the scored instances (their hash is recorded)"),
    predictions_dir: Path = Opt(..., help="results/predictions/<bench>"),
    stats_dir: Path = Opt(..., help="results/runs/<bench> (run accounting written by infer)"),
    tables_dir: Path = Opt(..., help="results/tables/<bench>"),
    out: Path = Opt(..., help="summary of logged runs (JSON)"),
    params: Path = Opt(Path("params.yaml")),
    benchmark: str = Opt("moca"),
) -> None:
    """Log one MLflow run per (benchmark, model, method) under a parent run; unchanged ones are skipped."""
    from socialbench.config import load_params
    from socialbench.hashing import sha256_file, sha256_json
    from socialbench.errors import DataError
    from socialbench.tracking import eval_key, git_commit, log_evaluations, parse_stats

    _benchmark(benchmark)
    p = load_params(params)
    # Every input is found, read and checked before MLflow is touched: a bad one stops the command
    # with its name and nothing logged, never a half-logged run.
    if not instances.is_file():
        raise DataError(str(instances), "instances file not found (--instances)")
    if not tables_dir.is_dir():
        raise DataError(str(tables_dir), "tables folder not found (--tables-dir; socialbench tables writes it)")
    tables = sorted(t for t in tables_dir.glob("*.*") if t.is_file())
    if not tables:
        raise DataError(str(tables_dir), "no tables in the tables folder (--tables-dir; socialbench tables writes them)")
    loaded = read_score_files(scores, p, params)
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
            raise DataError(str(stats_path), f"run accounting of {path} not found (--stats-dir {stats_dir}; infer writes it)")
        entry = p["models"][model]
        run_stats = parse_stats(stats_path.read_bytes(), str(stats_path))
        made = made_with(run_stats, stats_path, data_hash, instances)
        identity = run_stats.get("backend_identity") or {}
        evaluations.append({
            "benchmark": benchmark, "model": model, "method": method,
            "params": {"model": model, "backend": entry.get("backend"), "method": method, "seed": p["seed"],
                       "model_id": identity.get("model_id", entry.get("model_id")),
                       "model_revision": entry.get("revision") or identity.get("revision"),
                       "model_config_sha256": sha256_json(entry),
                       "backend_identity_sha256": sha256_json(identity) if identity else None},
            # As they were when the predictions were made (infer's record), not as they are now.
            "content": {"dataset_sha256": data_hash, "dev_sha256": made["dev_sha256"],
                        "prompt_template_sha256": made["prompt_template_sha256"],
                        "taxonomy_sha256": made["taxonomy_sha256"],
                        "predictions_sha256": sha256_file(pred), "scores_sha256": sha256_file(path)},
            "provenance": {**provenance, "infer_git_commit": made["git_commit"],
                           **{f"version.{k}": v for k, v in sorted(made["versions"].items())}},
            "scores": loaded[(model, method)],
            "stats": run_stats,
            "artifacts": [pred, path, stats_path, *tables],
        })
    summary = log_evaluations(evaluations, p["mlflow"]["tracking_uri"], p["mlflow"]["experiment"], Path("mlartifacts"))
    write_json(out, {"evaluations": sorted(f"{e['model']}/{e['method']}" for e in evaluations),
                      "keys": sorted(eval_key(e) for e in evaluations)})
    typer.echo(f"track: {len(summary['new'])} new run(s), {len(summary['existing'])} unchanged")


from socialbench.cache_cli import cache_app  # noqa: E402  (the `socialbench cache` commands)

app.add_typer(cache_app, name="cache")

from socialbench.media.cli import media_app  # noqa: E402  (the `socialbench media` commands)

app.add_typer(media_app, name="media")


@app.command("ui")
def ui(
    params: Path = Opt(Path("params.yaml")),
    port: int = Opt(5000),
    host: str = Opt("127.0.0.1"),
) -> None:
    """Open the MLflow UI on this repository's tracking store (telemetry off)."""
    import os

    from socialbench.config import load_params

    p = load_params(params)
    os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"
    os.environ["DO_NOT_TRACK"] = "true"
    cmd = ["mlflow", "ui", "--backend-store-uri", p["mlflow"]["tracking_uri"], "--host", host, "--port", str(port)]
    typer.echo(" ".join(cmd))
    os.execvp(cmd[0], cmd)


def main() -> None:
    try:
        app()
    except SocialbenchError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except OSError as exc:
        # A path that cannot be read or written (missing, a folder, no permission, no space): the
        # user's to fix, so one line naming it, not a traceback.
        if exc.filename is None:
            raise
        where = f"{exc.filename} -> {exc.filename2}" if exc.filename2 else str(exc.filename)
        typer.echo(f"error: {where}: {exc.strerror or exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
