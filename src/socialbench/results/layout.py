"""The results layout, owned here alone: every per-run file is ``<root>/<kind>/<benchmark>/<model>/<run><ext>``,
and params decide which runs exist. The rules, the stages and pruning all ask this module. Pure functions."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from socialbench.core.benchmarks import pair_excluded, robustness_runs

#: Per-run kinds and the extension of their files.
RUN_KINDS: dict[str, str] = {
    "predictions": ".jsonl",
    "traces": ".jsonl",
    "runs": ".stats.json",
    "scores": ".json",
    # per instance what the tables read of the run (correctness, answers): written by score beside its scores
    "outcomes": ".jsonl",
    "viewer": ".html",
    "metrics": ".json",
}
DEFAULT_ROOT = "results"


def _kind(kind: str) -> str:
    if kind not in RUN_KINDS:
        raise ValueError(f"unknown result kind {kind!r}; one of {', '.join(RUN_KINDS)}")
    return RUN_KINDS[kind]


def run_path(kind: str, benchmark: str, model: str, run: str, root: str = DEFAULT_ROOT) -> str:
    """``results/<kind>/<benchmark>/<model>/<run><ext>`` (a POSIX path string, as rules want)."""
    return f"{kind_dir(kind, benchmark, root)}/{model}/{run}{_kind(kind)}"


@functools.cache  # the rules ask for thousands of paths when Snakemake reads the workflow
def kind_dir(kind: str, benchmark: str, root: str = DEFAULT_ROOT) -> str:
    """The folder of one kind of a benchmark: ``results/<kind>/<benchmark>``."""
    _kind(kind)
    return f"{PurePosixPath(root) / kind / benchmark}"


def run_of(file_name: str) -> str:
    """The run of a per-run file name (``chain.stats.json`` -> ``chain``): run names hold no dot."""
    return file_name.split(".", 1)[0]


def model_runs(params: Mapping[str, Any], benchmark: str, methods: Iterable[str]) -> dict[str, list[str]]:
    """Per model (params order), the runs of a benchmark it makes: every method params name, less the pairs
    params exclude (``core.benchmarks.pair_excluded``), then its order runs
    (``core.benchmarks.robustness_runs``). A model with no run on the benchmark is left out."""
    methods = list(methods)
    section = params.get(benchmark) or {}
    out: dict[str, list[str]] = {}
    for model in params["models"]:
        runs = [m for m in methods if pair_excluded(params, benchmark, model, m) is None]
        if runs:
            out[model] = runs + robustness_runs(section, model, runs)
    return out


def runs(params: Mapping[str, Any], benchmark: str, methods: Iterable[str]) -> list[tuple[str, str]]:
    """(model, run) pairs of a benchmark that params make (order runs included), in params order."""
    return [(m, r) for m, rs in model_runs(params, benchmark, methods).items() for r in rs]


def exclusions(params: Mapping[str, Any], benchmark: str, methods: Iterable[str]) -> list[tuple[str, str, str]]:
    """(model, run, reason) of the pairs params exclude on a benchmark, for a model that runs on it at
    all (a model params keep off the benchmark, ``benchmarks:``, is no exclusion of this benchmark's)."""
    methods = list(methods)
    out = []
    for model, entry in params["models"].items():
        only = entry.get("benchmarks")
        if only is not None and benchmark not in only:
            continue
        out += [(model, m, r) for m in methods if (r := pair_excluded(params, benchmark, model, m)) is not None]
    return out


def run_files(kind: str, benchmark: str, pairs: Iterable[tuple[str, str]], root: str = DEFAULT_ROOT) -> list[str]:
    return [run_path(kind, benchmark, m, r, root) for m, r in pairs]
