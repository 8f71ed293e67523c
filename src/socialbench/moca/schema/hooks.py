"""MoCA's instances as a stage hook (core ``SchemaHooks``): the reader imports pandas, which the plug-in
class does not."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from socialbench.core.benchmarks import SchemaHooks
from socialbench.moca.schema.instances import load_instances

if TYPE_CHECKING:
    from socialbench.moca.benchmark import MocaBenchmark


class MocaSchema(SchemaHooks):
    benchmark: MocaBenchmark

    def load_instances(self, path: str | Path) -> list[dict[str, Any]]:
        return load_instances(path, self.benchmark.taxonomy)


HOOKS = MocaSchema
