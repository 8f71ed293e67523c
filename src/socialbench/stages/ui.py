"""``socialbench ui``: the MLflow UI on this repository's tracking store."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from socialbench.core.config import load_params
from socialbench.core.secrets import redact_url
from socialbench.results.tracking import is_shared_store, runs_page_url
from socialbench.results.tracking_uri import tracking_store_uri
from socialbench.stages.common import Opt, stage_app

app = stage_app("Open the MLflow UI.")


@app.command("ui")
def ui(
    params: Path = Opt(
        Path("params.yaml"), help="the params file naming the tracking store (mlflow.tracking_uri) and experiment"
    ),
    port: int = Opt(5000, min=1, max=65535, help="port of the UI on HOST"),
    host: str = Opt("127.0.0.1", help="address to serve the UI on (127.0.0.1: this machine only)"),
) -> None:
    """Open the MLflow UI on this repository's tracking store (telemetry off); prints the address of
    the experiment's runs table, where the UI lands."""
    p = load_params(params)
    os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"
    os.environ["DO_NOT_TRACK"] = "true"
    uri = tracking_store_uri(p)
    if uri.startswith(("http://", "https://")):  # a tracking server serves its own UI
        typer.echo(f"runs: {redact_url(runs_page_url(uri, p['mlflow']['experiment'], uri))}")
        return
    if is_shared_store(uri):
        typer.echo(f"ui: serving {redact_url(uri)}")  # the command line below would show its password
    url = runs_page_url(uri, p["mlflow"]["experiment"], f"http://{host}:{port}")
    cmd = ["mlflow", "ui", "--backend-store-uri", uri, "--host", host, "--port", str(port)]
    typer.echo(" ".join(redact_url(c) for c in cmd))
    typer.echo(f"runs: {url}")
    os.execvp(cmd[0], cmd)
