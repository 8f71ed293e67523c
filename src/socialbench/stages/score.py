"""``socialbench score``: score runs' predictions, one score file per run and, for benchmarks whose tables
take per-instance data, an outcomes file beside it (the tables read it and never score again)."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.core.benchmarks import get_benchmark_class
from socialbench.core.config import load_params
from socialbench.core.errors import ConfigError, DataError
from socialbench.core.io import brief, first_bad_line, read_jsonl_lines, write_json, write_jsonl
from socialbench.core.paths import check_io
from socialbench.results.layout import kind_dir, run_path
from socialbench.stages.common import BENCH_HELP, TAXONOMY_HELP, Opt, load_benchmark, stage_app, subset_instances

app = stage_app("Score predictions.")


def parse_run(run: str) -> tuple[str, str]:
    """(model, method) of a ``--run MODEL/METHOD``."""
    model, sep, method = run.partition("/")
    if not sep or not model or not method or "/" in method:
        raise ConfigError(f"--run {run!r}: must be MODEL/METHOD (a model of params and one of its methods)")
    return model, method


def layout_files(kinds: tuple[str, ...], benchmark: str, runs: list[str], results_dir: Path) -> list[tuple[Path, ...]]:
    """The files of ``kinds`` of each ``--run`` under ``results_dir``, as the results layout places them."""
    pairs = [parse_run(r) for r in runs]
    if len(set(pairs)) != len(pairs):
        raise ConfigError(f"a --run is given twice ({', '.join(runs)})")
    return [tuple(Path(run_path(k, benchmark, m, r, str(results_dir))) for k in kinds) for m, r in pairs]


def one_run(preds: list[dict], lines: list[int], source: str, model: str | None, method: str | None) -> None:
    """Every record is of one model and method (``--model``/``--method``, else the first record's): another
    run's records would be scored as this one's. DataError naming file, line and field."""
    if not preds:
        return
    for key, wanted in (("model", model), ("method", method)):
        expected = wanted if wanted is not None else preds[0].get(key)
        first = brief(expected if expected is not None else "none")
        whose = f"--{key} {wanted}" if wanted is not None else f"line {lines[0]}'s {first}"
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


@app.command("score")
def score(
    instances: Path = Opt(..., help="the processed instances the predictions were made for (JSON lines)"),
    benchmark: str = Opt(..., help=BENCH_HELP),
    results_dir: Path | None = Opt(
        None,
        help="results root: each --run's prediction records written by infer are read from, and its scores"
        " (and per-instance outcomes) written to, <kind>/<benchmark>/<model>/<method> under it",
    ),
    run: list[str] = Opt([], help="MODEL/METHOD, a run to score under --results-dir (repeat for each)"),
    predictions: Path | None = Opt(None, help="prediction records written by infer (JSON lines), of one run"),
    out: Path | None = Opt(None, help="scores (JSON) of --predictions: {group: {metric: value, n}}"),
    outcomes: Path | None = Opt(
        None, help="with --out: also each instance's outcome (JSON lines), which the tables read (--outcomes-dir)"
    ),
    taxonomy: Path | None = Opt(None, help=TAXONOMY_HELP),
    model: str | None = Opt(None, help="the model every record must be of (default: the first record's)"),
    method: str | None = Opt(None, help="the method every record must be of (default: the first record's)"),
    params: Path | None = Opt(
        None, help="params file: with a <benchmark>.subset, score the instances of that subset (as infer ran them)"
    ),
) -> None:
    """Score predictions with the benchmark's metrics (MoCA: section 3.3, per scenario), writing each
    instance's outcome beside the scores. Missing predictions and records with `error` are scored incorrect
    and invalid (stderr says how many). Every record must be of one model and method."""
    if results_dir is not None:
        if any(v is not None for v in (predictions, out, outcomes, model, method)):
            raise ConfigError(
                "score: --results-dir and --run name the runs; give them without --predictions, --out, --outcomes"
            )
        if not run:
            raise ConfigError("score: --results-dir needs at least one --run MODEL/METHOD")
        files = layout_files(("predictions", "scores", "outcomes"), benchmark, run, results_dir)
        # without per-instance tables no outcomes, but the folder (the job's output) is still made
        per_instance = get_benchmark_class(benchmark).tables_per_instance  # the class's (the plug-in is loaded below)
        if not per_instance:
            Path(kind_dir("outcomes", benchmark, results_dir.as_posix())).mkdir(parents=True, exist_ok=True)
        runs = [(p, s, o if per_instance else None, *parse_run(r)) for (p, s, o), r in zip(files, run)]
    else:
        if run:
            raise ConfigError("score: --run names a run under --results-dir; give --results-dir with it")
        if predictions is None or out is None:
            raise ConfigError("score: give --predictions and --out, or --results-dir and --run MODEL/METHOD")
        runs = [(predictions, out, outcomes, model, method)]
    check_io(
        {"--instances": instances, "--predictions": [r[0] for r in runs], "--taxonomy": taxonomy, "--params": params},
        {"--out": [r[1] for r in runs], "--outcomes": [r[2] for r in runs if r[2] is not None]},
    )
    bench = load_benchmark(benchmark, taxonomy)
    if not bench.tables_per_instance and any(r[2] is not None for r in runs):
        raise ConfigError(f"score: --outcomes: the tables of {benchmark} take no per-instance outcomes")
    insts = bench.schema.load_instances(instances)
    if not insts:
        raise DataError(str(instances), "no instances (the file is empty): nothing to score")
    if params is not None:
        insts, _ = subset_instances(bench, insts, load_params(params), str(instances))
    for predictions, out, outcomes, model, method in runs:
        parsed = read_jsonl_lines(predictions)
        first_bad_line(predictions, parsed)
        preds = [jl.record for jl in parsed]
        lines = [jl.line for jl in parsed]  # the file line of each record, for errors naming it
        one_run(preds, lines, str(predictions), model, method)
        where = {"source": str(predictions), "lines": lines, "instances_source": str(instances)}
        if outcomes is not None:
            result, rows = bench.eval.score_with_outcomes(insts, preds, **where)
        else:
            result, rows = bench.eval.score(insts, preds, **where), None
        ids = {p.get("id") for p in preds}
        missing = [g["id"] for g in insts if g["id"] not in ids]
        if missing:
            typer.echo(
                f"score: warning: {len(missing)} of {len(insts)} instances have no prediction in {predictions}"
                f" (scored incorrect and invalid), e.g. {missing[0]}",
                err=True,
            )
        left_out = [p for p in preds if p.get("not_evaluated")]
        if left_out:
            typer.echo(
                f"score: {len(left_out)} of {len(insts)} instances not evaluated in {predictions} (left out of the"
                f" scores), e.g. {left_out[0].get('id')}: {brief(left_out[0]['not_evaluated'], 120)}",
                err=True,
            )
        no_record = [p for p in preds if p.get("finish_reason") == "no_record" and not p.get("not_evaluated")]
        if no_record:
            typer.echo(
                f"score: {len(no_record)} of {len(insts)} instances not evaluated in {predictions}: the recorded"
                f" answers hold no record for them (no_record; scored invalid), e.g. {no_record[0].get('id')}",
                err=True,
            )
        failed = [p for p in preds if p.get("error") and p.get("finish_reason") != "no_record"]
        if failed:
            typer.echo(
                f"score: warning: {len(failed)} record(s) in {predictions} have `error` set (scored invalid),"
                f" e.g. {failed[0].get('id')}: {brief(failed[0]['error'], 120)}",
                err=True,
            )
        write_json(out, result)
        typer.echo(f"score: {out}")
        if rows is not None:
            write_jsonl(outcomes, rows)
            typer.echo(f"score: {outcomes}")
