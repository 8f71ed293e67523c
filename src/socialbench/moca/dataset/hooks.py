"""MoCA's data stages as hooks (core ``DatasetHooks``): the embedded demo and the validation of raw instances."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from socialbench.core.benchmarks import DatasetHooks
from socialbench.moca.dataset.demo import DemoConfig, generate
from socialbench.moca.dataset.prepare import prepare_file

if TYPE_CHECKING:
    from socialbench.moca.benchmark import MocaBenchmark


class MocaDataset(DatasetHooks):
    benchmark: MocaBenchmark

    def demo(self, params: dict[str, Any], out_dir: Path) -> dict[str, list[dict[str, Any]]]:
        return generate(out_dir, DemoConfig.from_params(params), self.benchmark.taxonomy)

    def prepare(self, raw: Path, on_invalid: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        bench = self.benchmark
        return prepare_file(raw, bench.taxonomy, on_invalid, media_roots=bench.options.get("media_roots"))


HOOKS = MocaDataset
