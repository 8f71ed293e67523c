"""``socialbench check-params`` and ``socialbench benchmarks``: what params and the registry hold."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from socialbench.core.benchmarks import available_benchmarks, get_benchmark
from socialbench.core.config import load_params, overlay_params, read_params_file, validate_params
from socialbench.core.errors import SocialbenchError
from socialbench.core.io import write_text_atomic
from socialbench.core.paths import check_io
from socialbench.stages.common import Opt, stage_app

app = stage_app("Params and the registered benchmarks.")


def params_text(params: Path, overlay: Path | None = None) -> str:
    """params validated, defaults filled (``overlay`` put over them first), as sorted JSON."""
    if overlay is None:
        return json.dumps(load_params(params), indent=2, sort_keys=True)
    merged = overlay_params(read_params_file(params), read_params_file(overlay))
    return json.dumps(validate_params(merged, source=f"{params} + {overlay}"), indent=2, sort_keys=True)


@app.command("check-params")
def check_params(
    params: Path = Opt(Path("params.yaml"), help="params file to validate"),
    overlay: Path | None = Opt(None, help="a params overlay put over it first (e.g. params-real.yaml)"),
    out: Path | None = Opt(None, help="write the validated params here (a params file the commands read)"),
) -> None:
    """Validate params.yaml against its schema and print it with defaults filled."""
    if out is None:
        typer.echo(params_text(params, overlay))
        return
    check_io({"--params": params, "--overlay": overlay}, {"--out": out})
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, params_text(params, overlay) + "\n")


@app.command("benchmarks")
def benchmarks() -> None:
    """List the registered benchmarks with their methods; exit 1 naming a benchmark whose stage hooks
    cannot be loaded."""
    problems = []
    for name in available_benchmarks():
        bench = get_benchmark(name)
        typer.echo(f"{name}: methods {', '.join(bench.method_names()) or '(none)'}")
        problems += bench.hooks_problems()
    if problems:
        raise SocialbenchError("; ".join(problems))
