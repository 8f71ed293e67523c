"""``socialbench tables``: a benchmark's result tables, figures and headline metrics from its score files
and, for per-instance statistics, the outcomes files the score stage wrote beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from socialbench.core.config import load_params
from socialbench.core.errors import ConfigError, DataError
from socialbench.core.io import (
    first_bad_line,
    read_jsonl,
    read_jsonl_lines,
    write_bytes_atomic,
    write_json,
    write_text_atomic,
)
from socialbench.core.paths import check_io
from socialbench.core.run_name import RunName
from socialbench.results.layout import RUN_KINDS
from socialbench.results.scores import check_outcomes, read_score_files, row_category, write_run_metrics
from socialbench.results.tables import answers_table, formats, rendered, with_note
from socialbench.stages.common import BENCH_HELP, PARAMS_HELP, Opt, load_benchmark, stage_app, subset_instances

app = stage_app("Render the result tables.")


def render_tables(
    benchmark: str,
    scores: list[Path],
    out_dir: Path,
    headline: Path,
    params: Path,
    instances: Path | None = None,
    outcomes_dir: Path | None = None,
    answers: bool = False,
    predictions_dir: Path | None = None,
) -> int:
    """Write the tables, figures and headline metrics (one file, one per run beside it); the number of files.
    With ``instances`` and ``outcomes_dir``, per-instance statistics; ``answers``: finish_reasons.* too."""
    check_io(
        {
            "SCORES": scores,
            "--params": params,
            "--instances": instances,
            "--outcomes-dir": outcomes_dir,
            "--predictions-dir": predictions_dir,
        },
        # the per-run metrics folder beside the headline is rewritten whole: an output folder too
        {"--out-dir": out_dir, "--headline": headline, "--headline (its per-run folder)": headline.with_suffix("")},
        folders=("--out-dir", "--outcomes-dir", "--predictions-dir", "--headline (its per-run folder)"),
    )
    bench = load_benchmark(benchmark)
    p = load_params(params)
    if (instances is None) != (outcomes_dir is None):
        raise ConfigError("tables: --instances and --outcomes-dir go together (per-instance statistics need both)")
    if answers and predictions_dir is None:
        raise ConfigError("tables: --answers-table reads the runs' predictions: give --predictions-dir")
    # everything is read, checked and rendered before anything is written: never a partial set of tables
    loaded = read_score_files(bench, scores, p, params)
    per_instance = {}
    if outcomes_dir is not None and bench.tables_per_instance:
        score_paths = {(path.parent.name, path.stem): path for path in scores}
        paths = {}
        for model, method in loaded:
            path = outcomes_dir / model / f"{method}{RUN_KINDS['outcomes']}"
            if not path.is_file():
                raise DataError(
                    str(path),
                    f"outcomes of {model}/{method} not found (--outcomes-dir {outcomes_dir}): the score stage writes"
                    " them beside the score file (rerun socialbench score)",
                )
            paths[(model, method)] = path
        insts, _ = subset_instances(bench, bench.schema.load_instances(instances), p, str(instances))
        ids = [i["id"] for i in insts]
        # one run's outcomes at a time, reduced before the next: memory flat in runs (issue 32)
        summaries = {
            key: run_summary(bench, path, ids, loaded[key], str(score_paths[key])) for key, path in paths.items()
        }
        per_instance = {"instances": insts, "summaries": summaries}
    # order runs (``<run>__order<k>``) go to the stability tables only: no paper table changes
    paper = {key: sc for key, sc in loaded.items() if RunName.parse(key[1]).order == 0}
    paper_instance = per_instance and {
        **per_instance,
        "summaries": {key: v for key, v in per_instance["summaries"].items() if key in paper},
    }
    files, head = bench.results.tables(paper, p, **paper_instance)
    stability = bench.results.stability_tables(loaded, p, **per_instance)
    if set(stability) & set(files):
        raise ValueError(f"stability tables repeat the names of tables: {sorted(set(stability) & set(files))}")
    files = {**files, **stability}
    if answers:  # finish_reasons.md/.csv/.tex: N, invalid share and finish reasons of each run
        runs = {
            (model, method): [
                {"error": r.get("error"), "finish_reason": r.get("finish_reason")}
                for r in read_jsonl(predictions_dir / model / f"{method}.jsonl")
            ]
            for model, method in loaded
        }
        categories = {m: row_category(e) for m, e in p["models"].items()}
        files = {**files, **formats("finish_reasons", answers_table(runs, categories))}
    _, subset = bench.subset(p.get(benchmark) or {}, [], p["seed"])  # the note needs n and seed only
    if subset is not None:  # every table of a subset run says so, so no subset number passes for a full-run one
        files = with_note(files, subset_note(subset))
    files = rendered(files)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        if isinstance(content, bytes):  # a figure
            write_bytes_atomic(out_dir / name, content)
        else:
            write_text_atomic(out_dir / name, content)
    write_json(headline, head)
    # `dvc metrics show`: one file, so one row, per (model, method) in <headline without .json>/
    write_run_metrics(headline.with_suffix(""), head)
    return len(files)


def run_summary(bench, path: Path, instance_ids: list[str], scores: dict[str, Any], scores_source: str) -> Any:
    """The benchmark's summary of one outcomes file, its rows checked against instances and score groups."""
    parsed = read_jsonl_lines(path)
    first_bad_line(path, parsed)
    rows = [jl.record for jl in parsed]
    sizes = {group: bench.group_size(m) for group, m in scores.items()}
    check_outcomes(rows, [jl.line for jl in parsed], str(path), instance_ids, sizes, scores_source)
    return bench.results.run_summary(rows, source=str(path))


def subset_note(subset) -> str:
    """The last note of every table of a subset run, from params only (CSV files stay plain data)."""
    by = f", stratified by {subset.by}" if subset.by else ""
    return (
        f"Subset run (params subset n={subset.n}, seed {subset.seed}{by}): at most {subset.n} instances;"
        " these are not full-run numbers."
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
    params: Path = Opt(Path("params.yaml"), help=PARAMS_HELP),
    benchmark: str = Opt(..., help=BENCH_HELP),
    instances: Path | None = Opt(
        None,
        help="the scored instances; with --outcomes-dir, per-instance statistics"
        " (MoCA: 95% bootstrap intervals, paired tests)",
    ),
    outcomes_dir: Path | None = Opt(
        None,
        help="results/outcomes/<benchmark>: each run's per-instance outcomes, written by score (with --instances)",
    ),
    predictions_dir: Path | None = Opt(None, help="results/predictions/<benchmark> (with --answers-table)"),
    answers_table: bool = Opt(
        False,
        "--answers-table",
        help="also finish_reasons.*: each run's N, invalid share and finish reasons (from --predictions-dir)",
    ),
) -> None:
    """Render the benchmark's result tables (and figures) and the headline metrics file."""
    n = render_tables(
        benchmark, scores, out_dir, headline, params, instances, outcomes_dir, answers_table, predictions_dir
    )
    typer.echo(f"tables: {n} file(s) in {out_dir}")
