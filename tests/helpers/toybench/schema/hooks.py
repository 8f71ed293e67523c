"""toybench's instances (test double)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.core.benchmarks import SchemaHooks
from socialbench.core.errors import DataError
from socialbench.core.io import read_jsonl


class ToySchema(SchemaHooks):
    def load_instances(self, path: str | Path) -> list[dict[str, Any]]:
        recs = read_jsonl(path)
        for rec in recs:
            if not isinstance(rec.get("options"), list):
                raise DataError(str(path), "must be a list", record=str(rec.get("id")), field="options")
        return recs


HOOKS = ToySchema
