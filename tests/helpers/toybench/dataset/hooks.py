"""toybench's demo data (test double)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.core.benchmarks import DatasetHooks
from socialbench.core.io import write_jsonl

from ..benchmark import make_instances


class ToyDataset(DatasetHooks):
    def demo(self, params: dict[str, Any], out_dir: Path) -> dict[str, list[dict[str, Any]]]:
        out = {"test": make_instances(params["toybench"]["n"]), "dev": make_instances(3, "dev")}
        for split, recs in out.items():
            write_jsonl(Path(out_dir) / f"{split}.jsonl", recs)
        return out


HOOKS = ToyDataset
