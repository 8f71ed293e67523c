"""``socialbench check-params`` and ``socialbench benchmarks``: what params and the registry hold."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from socialbench.stages.common import Opt, stage_app

app = stage_app("Params and the registered benchmarks.")


def params_text(params: Path) -> str:
    """params validated against its schema, with defaults filled, as sorted JSON."""
    from socialbench.core.config import load_params

    return json.dumps(load_params(params), indent=2, sort_keys=True)


def benchmark_lines() -> list[str]:
    """One line per registered benchmark: its name and methods."""
    from socialbench.core.benchmarks import available_benchmarks, get_benchmark

    return [
        f"{name}: methods {', '.join(get_benchmark(name).method_names()) or '(none)'}"
        for name in available_benchmarks()
    ]


@app.command("check-params")
def check_params(params: Path = Opt(Path("params.yaml"), help="params file to validate")) -> None:
    """Validate params.yaml against its schema and print it with defaults filled."""
    typer.echo(params_text(params))


@app.command("benchmarks")
def benchmarks() -> None:
    """List the registered benchmarks with their methods."""
    for line in benchmark_lines():
        typer.echo(line)
