"""Removing a model or method is one params edit: the outputs of (model, method) runs that params no
longer name are moved out of the pipeline's result folders (``prune-outputs``, run by each tables job),
and the dvc.lock entries of stages that dvc.yaml no longer defines are dropped (``prune-lock``, run by
the closing dvc_commit rule). DVC itself keeps a removed matrix item's lock entry forever, and the
stages reading a whole results folder would see the stale files; both tools agree again afterwards.

Pure logic first (what is stale and why), I/O at the end."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError

#: The per-run result folders: results/<kind>/<benchmark>/<model>/<method><ext>.
RUN_KINDS = ("predictions", "traces", "runs", "scores", "viewer")


def run_of(file_name: str) -> str:
    """The method of a per-run file name (``codar.stats.json`` -> ``codar``): method names hold no dot."""
    return file_name.split(".", 1)[0]


def stale_reason(model: str, method: str, models: Iterable[str], methods: Iterable[str], benchmark: str) -> str | None:
    """Why params no longer name the run (model, method) of a benchmark, or None when they do."""
    if model not in set(models):
        return f"model {model} is not in params.yaml models"
    if method not in set(methods):
        return f"method {method} is not in params.yaml {benchmark}.methods"
    return None


def stale_runs(
    files: Iterable[tuple[str, str, str]], models: Iterable[str], methods: Iterable[str], benchmark: str
) -> list[tuple[str, str]]:
    """[(relative path, reason)] of the (relative path, model, file name) entries params no longer name,
    sorted by path (deterministic reports)."""
    models, methods = list(models), list(methods)
    out = []
    for rel, model, name in files:
        reason = stale_reason(model, run_of(name), models, methods, benchmark)
        if reason is not None:
            out.append((rel, reason))
    return sorted(out)


def stale_lock_stages(locked: Iterable[str], defined: Iterable[str]) -> list[str]:
    """Stage names in dvc.lock that dvc.yaml (its matrix and foreach items expanded) no longer defines."""
    live = set(defined)
    return sorted(name for name in locked if name not in live)


# ---- I/O --------------------------------------------------------------------------------------


def _run_files(results: Path, benchmark: str) -> list[tuple[str, str, str]]:
    entries = []
    for kind in RUN_KINDS:
        root = results / kind / benchmark
        if not root.is_dir():
            continue
        for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            for f in sorted(model_dir.iterdir()):
                entries.append((f.relative_to(results).as_posix(), model_dir.name, f.name))
    return entries


def prune_outputs(results: Path, benchmark: str, p: dict[str, Any], archive: Path | None) -> list[dict[str, str]]:
    """Move (``archive`` given: to archive/<same relative path>, replacing an older copy) or delete the
    per-run outputs of a benchmark whose (model, method) params no longer name; remove the model
    folders left empty. Returns one report record per path: {path, reason, action}."""
    section = p.get(benchmark)
    if not isinstance(section, dict) or "methods" not in section:
        raise ConfigError(f"prune-outputs: params has no {benchmark}.methods (is {benchmark} a benchmark section?)")
    report = []
    for rel, reason in stale_runs(_run_files(results, benchmark), p["models"], section["methods"], benchmark):
        src = results / rel
        if archive is not None:
            dst = archive / rel
            if dst.is_dir():
                shutil.rmtree(dst)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(src), str(dst))
            action = f"moved to {dst.as_posix()}"
        else:
            shutil.rmtree(src) if src.is_dir() else src.unlink()
            action = "deleted"
        report.append({"path": (results / rel).as_posix(), "reason": reason, "action": action})
        if not any(src.parent.iterdir()):
            src.parent.rmdir()
    return report


def prune_lock(repo_root: Path) -> list[str]:
    """Drop the dvc.lock entries of stages dvc.yaml no longer defines; the file is rewritten with DVC's
    own YAML writer (nothing else changes). Returns the dropped stage names."""
    from dvc.repo import Repo
    from dvc.utils.serialize import modify_yaml

    lock = repo_root / "dvc.lock"
    if not lock.is_file():
        return []
    with Repo(str(repo_root)) as repo:
        defined = [stage.name for stage in repo.index.stages if hasattr(stage, "cmd")]
    import yaml

    dropped = stale_lock_stages(
        list((yaml.safe_load(lock.read_text(encoding="utf-8")) or {}).get("stages") or {}), defined
    )
    if dropped:  # an unchanged lock is left as it is, byte for byte
        with modify_yaml(str(lock)) as data:
            for name in dropped:
                del data["stages"][name]
    return dropped
