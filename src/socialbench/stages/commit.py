"""``socialbench commit``: the run's closing commit of every DVC stage's outputs."""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from socialbench.results.commit import commit_outputs
from socialbench.stages.common import Opt, stage_app

app = stage_app("Record every DVC stage's outputs in dvc.lock and DVC's cache.")


@app.command("commit")
def commit(repo: Path = Opt(Path("."), help="the DVC repository whose stages are committed")) -> None:
    """Record every stage's outputs in dvc.lock and DVC's cache, as `dvc commit --force --no-relink` does."""
    logging.getLogger("dvc").setLevel(logging.ERROR)  # as `dvc commit --quiet`: no per-output notes
    typer.echo(f"commit: {commit_outputs(repo)} stage(s) recorded in {repo / 'dvc.lock'}")
