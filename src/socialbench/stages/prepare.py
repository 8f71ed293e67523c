"""``socialbench prepare``: validate raw instances; keep the good ones, report the rest."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.core.config import load_params
from socialbench.core.errors import DataError, SocialbenchError
from socialbench.core.io import write_jsonl
from socialbench.core.paths import MediaRoots, check_io
from socialbench.stages.common import BENCH_HELP, TAXONOMY_HELP, Opt, load_benchmark, stage_app

app = stage_app("Validate raw instances.")


def prepare_instances(
    benchmark: str, raw: Path, out: Path, report: Path, taxonomy: Path | None, on_invalid: str, params: Path
) -> tuple[int, int]:
    """Write kept records to ``out``, dropped ones to ``report``; (kept, dropped). None kept is an error."""
    check_io({"--raw": raw, "--taxonomy": taxonomy, "--params": params}, {"--out": out, "--report": report})
    if on_invalid not in ("drop", "fail"):
        raise SocialbenchError(f"--on-invalid {on_invalid!r}: must be one of drop, fail")
    bench = load_benchmark(benchmark, taxonomy)
    bench.options["media_roots"] = MediaRoots.from_params(load_params(params))  # media paths relative to here
    kept, dropped = bench.dataset.prepare(raw, on_invalid)
    write_jsonl(report, dropped)
    if not kept:
        raise DataError(str(raw), f"no record passed validation: all {len(dropped)} were dropped (reasons in {report})")
    write_jsonl(out, kept)
    return len(kept), len(dropped)


@app.command("prepare")
def prepare(
    raw: Path = Opt(..., help="raw instances (JSON lines)"),
    out: Path = Opt(..., help="validated instances (JSON lines)"),
    report: Path = Opt(..., help="dropped records with their reasons (JSON lines)"),
    benchmark: str = Opt(..., help=BENCH_HELP),
    taxonomy: Path | None = Opt(None, help=TAXONOMY_HELP),
    on_invalid: str = Opt("drop", help="drop: leave bad records out and report them; fail: stop"),
    params: Path = Opt(Path("params.yaml"), help="params file (media.allowed_roots: where media may be besides data/)"),
) -> None:
    """Validate raw instances (schema, taxonomy, media present, inside the data folders, images
    decodable); keep good ones, report the rest. Nothing kept is an error (after the report is written)."""
    kept, dropped = prepare_instances(benchmark, raw, out, report, taxonomy, on_invalid, params)
    typer.echo(f"prepare: kept {kept}, dropped {dropped} (see {report})")
