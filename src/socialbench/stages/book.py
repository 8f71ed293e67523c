"""``socialbench book``: one PDF of every table and figure, each footnoted with its MLflow run, commit,
data hash and command; Typst compiles it in-process (extra ``book``: no TeX)."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.core.benchmarks import available_benchmarks
from socialbench.core.config import load_params
from socialbench.core.errors import ConfigError
from socialbench.core.paths import check_io
from socialbench.results.book import Store, build_pdf, read_items, read_section
from socialbench.results.tracking_uri import tracking_store_uri

Opt = typer.Option


def book(
    benchmark: list[str] = Opt(
        ...,
        help=f"a benchmark to put in the book ({', '.join(available_benchmarks())}; repeat for each: one section"
        " each, in this order); --tables-dir, --instances and --tracked are given once per benchmark, in the same"
        " order",
    ),
    tables_dir: list[Path] = Opt(
        ..., help="results/tables/<benchmark>: its .csv tables and .png figures go in the book"
    ),
    instances: list[Path] = Opt(..., help="the instances the tables were computed from (their sha256 is printed)"),
    tracked: list[Path] = Opt(
        ..., help="results/mlflow/<benchmark>.json, the track summary: its eval keys name the MLflow runs listed"
    ),
    tables_rule: list[str] = Opt(
        [],
        help="the Snakemake rule that wrote each --tables-dir (default <benchmark>_tables, the demo's rule;"
        " give it once per benchmark, in the same order, or not at all)",
    ),
    out: Path = Opt(..., help="the PDF to write (results/book/book.pdf)"),
    typ: Path | None = Opt(None, help="where its Typst source goes (default: --out with .typ)"),
    params: Path = Opt(
        Path("params.yaml"), help="the params file naming the tracking store (mlflow.tracking_uri) and experiment"
    ),
    mlflow_url: str = Opt(
        "http://127.0.0.1:5000",
        help="address of the MLflow UI the run links point at (`socialbench ui` serves it there)",
    ),
) -> None:
    """Build the results book PDF from the tables and figures, linking the MLflow runs that logged them."""
    counts = {len(benchmark), len(tables_dir), len(instances), len(tracked)}
    if len(counts) != 1:
        raise ConfigError(
            "book: give --tables-dir, --instances and --tracked once per --benchmark, in the same order"
            f" (got {len(benchmark)} benchmark(s), {len(tables_dir)} tables folder(s),"
            f" {len(instances)} instances file(s), {len(tracked)} summary file(s))"
        )
    if tables_rule and len(tables_rule) != len(benchmark):
        raise ConfigError(
            f"book: give --tables-rule once per --benchmark or not at all (got {len(tables_rule)} rule(s) for"
            f" {len(benchmark)} benchmark(s))"
        )
    if len(set(benchmark)) != len(benchmark):
        raise ConfigError(f"book: a --benchmark is given twice ({', '.join(benchmark)})")
    typ = typ if typ is not None else out.with_suffix(".typ")
    check_io(
        {"--params": params, "--tables-dir": tables_dir, "--instances": instances, "--tracked": tracked},
        {"--out": out, "--typ": typ},
        folders=("--tables-dir",),
    )
    p = load_params(params)
    # Every table and figure is read and checked before the tracking store is opened.
    items = [read_items(t) for t in tables_dir]
    store = Store(tracking_store_uri(p), p["mlflow"]["experiment"], mlflow_url)
    rules = tables_rule or [None] * len(benchmark)
    sections = [
        read_section(b, t, i, s, store, it, rule=r)
        for b, t, i, s, it, r in zip(benchmark, tables_dir, instances, tracked, items, rules)
    ]
    for warning in build_pdf(sections, out, typ):
        typer.echo(f"book: typst warning: {warning}", err=True)
    for item in (i for s in sections for i in s.items if i.note):
        typer.echo(f"book: {item.shown}: {item.note}", err=True)
    n = sum(len(s.items) for s in sections)
    typer.echo(f"book: {n} table(s) and figure(s) of {len(sections)} benchmark(s) in {out}")
