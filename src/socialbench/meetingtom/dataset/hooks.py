"""MeetingToM's embedded demo as a stage hook (core ``DatasetHooks``); its other data stages are
``socialbench meetingtom ...`` commands (cli.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socialbench.core.benchmarks import DatasetHooks
from socialbench.meetingtom.dataset.demo import generate
from socialbench.meetingtom.dataset.demo_script import DemoConfig


class MeetingToMDataset(DatasetHooks):
    def demo(self, params: dict[str, Any], out_dir: Path) -> dict[str, list[str]]:
        """The demo release, written as a local mirror in the official AMI layout."""
        return generate(out_dir, DemoConfig.from_params(params))


HOOKS = MeetingToMDataset
