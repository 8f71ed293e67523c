"""``socialbench serve``: the node's shared model servers (``vllm serve``, one per model).

socialbench serve list            the servers recorded on this node: model, port, pid, jobs using it
socialbench serve stop            stop the idle ones (no live job uses them); --force: all of them

A local pipeline keeps each model's server until its end and then stops it itself (the Snakefile's
``onsuccess``/``onerror``); ``stop`` is for a pipeline that was killed before it could.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

serve_app = typer.Typer(no_args_is_help=True, add_completion=False, help="The node's shared model servers.")

Opt = typer.Option
_DIR_HELP = "registry folder (default: $SOCIALBENCH_SERVER_DIR, else /tmp/socialbench-<uid>/servers)"


@serve_app.command("list")
def list_servers(
    directory: Path | None = Opt(None, "--dir", help=_DIR_HELP),
    as_json: bool = Opt(False, "--json", help="print JSON"),
) -> None:
    """The servers recorded on this node, with the jobs using each."""
    from socialbench.backends.vllm_servers import SharedServers
    from socialbench.core.paths import check_io

    check_io({"--dir": directory}, {}, folders=["--dir"])
    records = SharedServers(directory).records()
    if as_json:
        typer.echo(json.dumps(records, indent=2, sort_keys=True))
        return
    if not records:
        typer.echo("no shared model server on this node")
    for r in records:
        state = "running" if r["running"] else "gone"
        typer.echo(
            f"{r.get('model') or r['key']}: port {r['port']}, pid {r['pid']} ({state}),"
            f" {len(r['users'])} job(s) using it, log {r.get('log_path')}"
        )


@serve_app.command("stop")
def stop(
    force: bool = Opt(False, "--force", help="also stop servers that jobs are using"),
    directory: Path | None = Opt(None, "--dir", help=_DIR_HELP),
) -> None:
    """Stop this node's idle servers (a pipeline stops its own at its end)."""
    from socialbench.backends.vllm_servers import SharedServers
    from socialbench.core.paths import check_io

    check_io({"--dir": directory}, {}, folders=["--dir"])  # its records are removed, nothing else written
    stopped = SharedServers(directory).stop(force=force)
    for r in stopped:
        typer.echo(f"stopped {r.get('model') or r['key']} (port {r['port']}, pid {r['pid']})")
    if not stopped:
        typer.echo("no idle shared model server to stop")
