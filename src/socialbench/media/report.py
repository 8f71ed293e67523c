"""The media report: every instance left out (or that stopped the run) and why, plus counts.

Written as ``results/reports/media.jsonl`` (sorted) and ``media.md``, byte-deterministic: no timings or
cache statistics (those go to the log), so DVC sees no change on a rerun."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from socialbench.core.io import write_jsonl, write_text_atomic
from socialbench.media.errors import MediaError


@dataclass(frozen=True)
class MediaProblem:
    split: str
    id: str
    path: str
    problem: str
    detail: str
    message: str  # the full error: file, instance, problem and detail
    action: str  # "skipped" (left out of this run) | "failed" (stopped the run)


@dataclass
class SplitCounts:
    instances: int = 0
    video_instances: int = 0
    with_frames: int = 0
    frames: int = 0
    left_out: int = 0


@dataclass
class MediaReport:
    settings: dict[str, Any] = field(default_factory=dict)
    problems: list[MediaProblem] = field(default_factory=list)
    counts: dict[str, SplitCounts] = field(default_factory=dict)

    def split(self, name: str) -> SplitCounts:
        return self.counts.setdefault(name, SplitCounts())

    def add(self, split: str, instance_id: str, err: MediaError, action: str) -> None:
        self.problems.append(MediaProblem(split, instance_id, err.path, err.problem, err.detail, str(err), action))
        if action == "skipped":
            self.split(split).left_out += 1

    def sorted_problems(self) -> list[MediaProblem]:
        return sorted(self.problems, key=lambda p: (p.split, p.id, p.path, p.problem))

    def write(self, jsonl: str | Path, markdown: str | Path | None = None) -> None:
        write_jsonl(jsonl, (asdict(p) for p in self.sorted_problems()))
        if markdown is not None:
            write_text_atomic(markdown, self.markdown())

    def markdown(self) -> str:
        lines = ["# Media report", ""]
        if self.settings:
            lines.append("Settings: " + ", ".join(f"{k}={v}" for k, v in sorted(self.settings.items())))
            lines.append("")
        lines += [
            "| split | instances | video-text | with frames | frames | left out |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, c in sorted(self.counts.items()):
            lines.append(
                f"| {name} | {c.instances} | {c.video_instances} | {c.with_frames} | {c.frames} | {c.left_out} |"
            )
        lines.append("")
        problems = self.sorted_problems()
        if not problems:
            lines.append("No media problems: every instance was kept.")
        else:
            lines += [
                f"## Problems ({len(problems)})",
                "",
                "| split | instance | file | problem | action | details |",
                "|---|---|---|---|---|---|",
            ]
            for p in problems:
                detail = p.detail.replace("|", "\\|")
                lines.append(f"| {p.split} | {p.id} | `{p.path}` | {p.problem} | {p.action} | {detail} |")
        return "\n".join(lines) + "\n"
