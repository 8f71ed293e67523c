"""MeetingToM's instances as a stage hook (core ``SchemaHooks``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.core.benchmarks import SchemaHooks
from socialbench.meetingtom.schema.instances import load_instances


class MeetingToMSchema(SchemaHooks):
    def load_instances(self, path: str | Path) -> list[dict[str, Any]]:
        return load_instances(path)


HOOKS = MeetingToMSchema
