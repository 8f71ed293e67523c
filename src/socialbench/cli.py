"""The ``socialbench`` command: it only mounts. Each stage's command lives in ``socialbench/stages/<stage>.py``
and running one imports that module alone (the pipeline's code deps read these imports); ``--help`` lists
every command from the tables below without importing any stage."""

from __future__ import annotations

import atexit
import gc
import sys
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from socialbench.core.errors import SocialbenchError
from socialbench.core.plugins import Registry

#: Command name -> (the stage module whose ``app`` defines it, its one-line help).
COMMANDS: dict[str, tuple[str, str]] = {
    name: (f"socialbench.stages.{stage}", text)
    for name, stage, text in (
        ("check-params", "params", "Validate params.yaml against its schema and print it with defaults filled."),
        ("benchmarks", "params", "List the registered benchmarks with their methods."),
        ("demo", "demo", "Generate a benchmark's embedded demo data (deterministic from the seed)."),
        ("prepare", "prepare", "Validate raw instances; keep good ones, report the rest."),
        ("plan", "plan", "Plan a run: calls, cached calls, tokens, cost and wall time, before any call."),
        ("infer", "infer", "Run one model with one or more methods over the instances."),
        ("score", "score", "Score predictions with the benchmark's metrics."),
        ("tables", "tables", "Render the benchmark's result tables (and figures) and the headline metrics file."),
        ("viewer", "viewer", "Write the trace viewer: a page per run, its shards, media once."),
        ("track", "track", "Log one MLflow run per (benchmark, model, method) under a parent run."),
        ("prune-outputs", "prune", "Remove (or archive) the per-run outputs of runs params no longer make."),
        ("prune-lock", "prune", "Drop the dvc.lock entries of stages dvc.yaml no longer defines."),
        ("commit", "commit", "Record every DVC stage's outputs in dvc.lock and DVC's cache (the run's last job)."),
        ("ui", "ui", "Open the MLflow UI on this repository's tracking store."),
    )
}
#: Sub-apps (and the book command): name -> (module, attribute, help); benchmarks' ``cli.py`` mount besides.
SUB_APPS: dict[str, tuple[str, str, str]] = {
    "book": ("socialbench.stages.book", "book", "Build the results book PDF from the tables and figures."),
    "cache": ("socialbench.stages.cache", "cache_app", "Inspect the request cache."),
    "media": ("socialbench.media.cli", "media_app", "Media tools: probe, frames, clips, mosaic, audio."),
    "serve": ("socialbench.stages.serve", "serve_app", "The node's shared model servers: list, stop."),
    "weights": ("socialbench.stages.weights", "weights_app", "Model weights as pipeline data: GGUF to a model folder."),
}


#: Every command's typer app (a function for ``book``), imported when run; benchmarks' asked on a miss.
APPS: Registry[object] = Registry(
    "command",
    object,
    {
        **{name: (module, "app", None) for name, (module, _) in COMMANDS.items()},
        **{name: (module, attr, None) for name, (module, attr, _) in SUB_APPS.items()},
    },
)


APPS.add_source(lambda: {name: (module, "app", None) for name, module in benchmark_apps().items()})


def benchmark_apps() -> dict[str, str]:
    """{benchmark: its cli module} of built-in benchmarks with commands (found by file, nothing imported)."""
    from importlib import resources

    from socialbench.core.benchmarks import available_benchmarks

    root = resources.files("socialbench")
    return {n: f"socialbench.{n}.cli" for n in available_benchmarks() if root.joinpath(n, "cli.py").is_file()}


def command_help() -> dict[str, str]:
    """Every command's one-line help: the tables above, then the benchmarks'."""
    out = {name: h for name, (_, h) in COMMANDS.items()}
    out |= {name: h for name, (_, _, h) in SUB_APPS.items()}
    out |= {n: f"{n}'s own commands (`socialbench {n} --help` lists them)." for n in benchmark_apps()}
    return out


def load_command(name: str) -> Any:
    """The click command ``name``, importing only its module; None when unknown."""
    if name not in APPS:
        return None
    obj = APPS.get(name)
    if name in COMMANDS:  # a stage module's app holds its commands
        return typer.main.get_group(obj).commands[name]
    if not isinstance(obj, typer.Typer):  # a command function (book)
        one = typer.Typer(add_completion=False)
        one.command(name)(obj)
        return typer.main.get_group(one).commands[name]
    group = typer.main.get_group(obj)
    group.name = name
    return group


class LazyGroup(TyperGroup):
    """The root group: lists commands from the static tables, imports a module only to run it (or its help)."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(command_help())

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if self._listing:  # the root's help: a stub with the one-line help, nothing imported
            text = command_help().get(cmd_name)
            return None if text is None else TyperCommand(cmd_name, help=text, short_help=text)
        return load_command(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        # typer suggests from the commands it holds, and this group holds none until one is loaded
        if args and not args[0].startswith("-") and args[0] not in command_help():
            from difflib import get_close_matches

            matches = get_close_matches(args[0], self.list_commands(ctx))
            if matches:
                ctx.fail(f"No such command {args[0]!r}. Did you mean {', '.join(map(repr, matches))}?")
        return super().resolve_command(ctx, args)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    cls=LazyGroup,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    help="socialbench: MoCA and MeetingToM pipelines.",
)


@app.callback()
def _root() -> None:
    """socialbench: MoCA and MeetingToM pipelines."""


#: click's usage error (BadParameter's base is not public).
UsageError = typer.BadParameter.__mro__[1]


def _usage_line(exc: Exception) -> str:
    """A command-line mistake as one line: the command, then click's words naming option and value."""
    names, ctx = [], getattr(exc, "ctx", None)
    while ctx is not None and ctx.parent is not None:  # the root's name is however it was started
        names.append(ctx.info_name)
        ctx = ctx.parent
    return f"{' '.join(['socialbench', *reversed(names)])}: {exc.format_message()} (see --help)"


def main() -> None:
    from socialbench.core.io import one_line

    atexit.register(gc.freeze)  # no closing collections over torch, MLflow, DVC: up to 1 s a command (benchmarks.md)

    try:
        # not standalone: click's usage errors come here and are one line, as every bad input is
        code = app(standalone_mode=False)
    except UsageError as exc:
        typer.echo(f"error: {one_line(_usage_line(exc))}", err=True)
        sys.exit(2)
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        sys.exit(1)
    except SocialbenchError as exc:
        typer.echo(f"error: {one_line(exc)}", err=True)  # one line, capped (a value may be megabytes)
        sys.exit(2)
    except OSError as exc:
        # a path that cannot be read or written is the user's to fix: one line naming it, no traceback
        from socialbench.core.paths import is_disk_full

        if exc.filename is None and is_disk_full(exc):
            typer.echo(f"error: no space left on the device ({exc.strerror}); free some space and run again", err=True)
            sys.exit(2)
        if exc.filename is None:
            raise
        where = f"{exc.filename} -> {exc.filename2}" if exc.filename2 else str(exc.filename)
        typer.echo(f"error: {where}: {exc.strerror or exc}", err=True)
        sys.exit(2)
    if isinstance(code, int) and code:  # a command's typer.Exit(code)
        sys.exit(code)


if __name__ == "__main__":
    main()
