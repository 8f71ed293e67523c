"""``socialbench serve list|stop``: the node's shared model servers (one per model). Only a process proven
to be the recorded server is signalled (docs/security.md, "Process control"); stale records are removed,
other files left alone. A pipeline stops its own servers at its end; ``stop`` is for one killed before."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from socialbench.backends.vllm_servers import SharedServers
from socialbench.core.paths import check_io

serve_app = typer.Typer(no_args_is_help=True, add_completion=False, help="The node's shared model servers.")

Opt = typer.Option
_DIR_HELP = "registry folder (default: $SOCIALBENCH_SERVER_DIR, else /tmp/socialbench-<uid>/servers)"


@serve_app.command("list")
def list_servers(
    directory: Path | None = Opt(None, "--dir", help=_DIR_HELP),
    as_json: bool = Opt(False, "--json", help="print JSON"),
) -> None:
    """The servers recorded on this node, with the jobs using each."""
    check_io({"--dir": directory}, {}, folders=["--dir"])
    servers = SharedServers(directory)
    records = servers.records()
    _note_foreign(servers)
    if as_json:
        typer.echo(json.dumps(records, indent=2, sort_keys=True))
        return
    if not records:
        typer.echo("no shared model server on this node")
    for r in records:
        state = "running" if r["running"] else f"stale: {r['stale']}"
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
    check_io({"--dir": directory}, {}, folders=["--dir"])  # its records are removed, nothing else written
    servers = SharedServers(directory)
    done = servers.stop(force=force)
    _note_foreign(servers)
    for r in done.stopped:
        typer.echo(f"stopped {r.get('model') or r['key']} (port {r['port']}, pid {r['pid']})")
    for r, why in done.stale:
        typer.echo(f"removed the stale record {servers.dir / (r['key'] + '.json')}: {why}; nothing was signalled")
    if not done.stopped:
        typer.echo("no idle shared model server to stop")


def _note_foreign(servers) -> None:
    """Name the folder's files that are not server records (left alone)."""
    foreign = servers.foreign_files()
    if foreign:
        shown = ", ".join(foreign[:10]) + (f" and {len(foreign) - 10} more" if len(foreign) > 10 else "")
        typer.echo(f"note: {servers.dir}: not server records, left alone: {shown}", err=True)
