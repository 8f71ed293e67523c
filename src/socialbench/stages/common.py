"""What the stage commands share: their option help and the benchmark named by ``--benchmark``.

Light on purpose (the core registry only): every stage module imports it."""

from __future__ import annotations

from pathlib import Path

import typer

from socialbench.core.benchmarks import available_benchmarks, get_benchmark

Opt = typer.Option

TAXONOMY_HELP = "MoCA: a taxonomy file (YAML/JSON) in place of the built-in one"
PARAMS_HELP = "the params file (params.yaml: models, seed and the stage's settings)"


def load_benchmark(name: str, taxonomy: Path | None = None):
    """The benchmark plug-in named by --benchmark (ConfigError listing the registered ones)."""
    return get_benchmark(name, {"taxonomy": taxonomy})


def benchmark_choices() -> tuple[str, str] | None:
    """(the registered benchmarks, each one's methods) for help texts; None if a plug-in fails to load."""
    try:
        names = available_benchmarks()
        return ", ".join(names), "; ".join(f"{n}: {', '.join(get_benchmark(n).method_names())}" for n in names)
    except Exception:  # noqa: BLE001 (a broken plug-in is reported by the command that uses it; --help never fails)
        return None


def _choices() -> tuple[str, str]:
    """--benchmark's and --method's help listing the choices (plain wording if a plug-in fails to load)."""
    found = benchmark_choices()
    if found is None:
        return (
            "benchmark (a registered plug-in; `socialbench benchmarks` lists them)",
            "a method of the benchmark (`socialbench benchmarks` lists them)",
        )
    return f"benchmark, one of: {found[0]}", f"a method of the benchmark, one of ({found[1]})"


BENCH_HELP, METHOD_HELP = _choices()


def stage_app(help: str) -> typer.Typer:
    """The typer app of one stage module (its commands are mounted on ``socialbench`` by name)."""
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False, help=help)


def subset_instances(bench, instances: list, params: dict, source: str, echo=typer.echo):
    """``(instances, SubsetInfo | None)``: the instances a run answers, params ``<benchmark>.subset``
    applied (``core.subset``). A subset not smaller than the data says so and keeps every instance."""
    chosen, info = bench.subset(params.get(bench.name) or {}, instances, params["seed"])
    if info is not None and info.whole and info.n > info.total:
        echo(
            f"{bench.name}.subset: n={info.n} is larger than the data ({info.total} instances in {source}):"
            " every instance runs",
            err=True,
        )
    return chosen, info
