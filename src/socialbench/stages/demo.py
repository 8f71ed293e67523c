"""``socialbench demo``: a benchmark's embedded demo data (deterministic from the seed)."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.core.config import load_params
from socialbench.core.paths import check_io
from socialbench.stages.common import BENCH_HELP, Opt, load_benchmark, stage_app

app = stage_app("A benchmark's embedded demo data.")


@app.command("demo")
def demo(
    params: Path = Opt(Path("params.yaml"), help="params file (seed and the benchmark's demo settings)"),
    out_dir: Path = Opt(Path("data/raw/moca_demo"), help="where the demo's raw files go"),
    benchmark: str = Opt(..., help=BENCH_HELP),
) -> None:
    """Generate a benchmark's embedded demo data (deterministic from the seed)."""
    check_io({"--params": params}, {"--out-dir": out_dir}, folders=("--out-dir",))
    bench = load_benchmark(benchmark)
    recs = bench.dataset.demo(load_params(params), out_dir)
    typer.echo(f"demo: {', '.join(f'{k}={len(v)}' for k, v in recs.items())} instances in {out_dir}")
