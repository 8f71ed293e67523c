"""Removing a model or method is one params edit: outputs of runs params no longer make are moved out of
the result folders (``prune-outputs``), and dvc.lock entries of stages dvc.yaml no longer defines are
dropped (``prune-lock``; DVC alone keeps them forever)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from socialbench.core.benchmarks import pair_excluded
from socialbench.core.errors import ConfigError, DataError
from socialbench.core.io import load_yaml_file
from socialbench.core.paths import inside_root, move_inside, refuse_special, remove_inside, within
from socialbench.core.run_name import RunName
from socialbench.results.layout import RUN_KINDS, kind_dir, model_runs, run_of


def stale_reason(
    model: str, method: str, params: Mapping[str, Any], methods: Iterable[str], benchmark: str
) -> str | None:
    """Why params no longer make the run (model, method) of a benchmark, or None when they do: the model or
    method is gone, params exclude the pair, or (an order run) ``<benchmark>.robustness`` no longer asks."""
    methods = list(methods)
    if model not in params["models"]:
        return f"model {model} is not in params.yaml models"
    try:
        rn = RunName.parse(method)
    except ValueError as exc:
        return f"{exc}: params make no such run"
    base, order = str(rn.run), rn.order
    if base not in methods:
        return f"method {base} is not in params.yaml {benchmark}.methods"
    # the reason params give (exclusions() leaves out a model kept off the benchmark; a stale run is either)
    reason = pair_excluded(params, benchmark, model, method)
    if reason is not None:
        return f"params exclude {model}/{method} (models.{model}): {reason}"
    if order and method not in (model_runs(params, benchmark, methods).get(model) or []):
        return f"params {benchmark}.robustness no longer asks for {model}/{method}"
    return None


def stale_runs(
    files: Iterable[tuple[str, str, str]], params: Mapping[str, Any], methods: Iterable[str], benchmark: str
) -> list[tuple[str, str]]:
    """[(relative path, reason)] of the (path, model, file name) entries params no longer make, by path."""
    methods = list(methods)
    reasons = [(rel, stale_reason(model, run_of(name), params, methods, benchmark)) for rel, model, name in files]
    return sorted((rel, reason) for rel, reason in reasons if reason is not None)


def stale_lock_stages(locked: Iterable[str], defined: Iterable[str]) -> list[str]:
    """Stage names in dvc.lock that dvc.yaml (its matrix and foreach items expanded) no longer defines."""
    live = set(defined)
    return sorted(name for name in locked if name not in live)


# ---- I/O --------------------------------------------------------------------------------------


def _run_files(results: Path, benchmark: str, kinds: Iterable[str]) -> list[tuple[str, str, str]]:
    entries = []
    for kind in kinds:
        root = Path(kind_dir(kind, benchmark, results.as_posix()))
        if not root.is_dir():
            continue
        for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            for f in sorted(model_dir.iterdir()):
                entries.append((f.relative_to(results).as_posix(), model_dir.name, f.name))
    return entries


def prune_outputs(
    results: Path, benchmark: str, p: dict[str, Any], archive: Path | None, kinds: Iterable[str] = RUN_KINDS
) -> list[dict[str, str]]:
    """Move (``archive`` given: to archive/<same relative path>, replacing an older copy) or delete the per-run outputs
    of a benchmark whose (model, method) run params no longer make, in the folders of ``kinds`` (default: every kind);
    remove the model folders left empty. Returns one report record per path: {path, reason, action}."""
    section = p.get(benchmark)
    if not isinstance(section, dict) or "methods" not in section:
        raise ConfigError(f"prune-outputs: params has no {benchmark}.methods (is {benchmark} a benchmark section?)")
    report = []
    stale = stale_runs(_run_files(results, benchmark, kinds), p, section["methods"], benchmark)
    for rel, _ in stale:  # every path checked before the first is touched
        inside_root(results / rel, results, "deleted or moved")
        if archive is not None:
            inside_root(archive / rel, archive, "deleted or moved")
    for rel, reason in stale:
        src = results / rel
        # Only paths inside the results tree (after resolving the links of their folders) are touched,
        # and a link is removed or moved as a link: a linked model folder never leads the pruning elsewhere.
        if archive is not None:
            dst = archive / rel
            move_inside(src, dst, results, archive)
            action = f"moved to {dst.as_posix()}"
        else:
            remove_inside(src, results)
            action = "deleted"
        report.append({"path": (results / rel).as_posix(), "reason": reason, "action": action})
        if not src.parent.is_symlink() and src.parent.is_dir() and not any(src.parent.iterdir()):
            remove_inside(src.parent, results)
    return report


def dvc_lock(repo_root: Path) -> Path:
    """The dvc.lock (maybe not there yet) of the DVC repository ``repo_root``, refused naming it where it leads
    outside (it is rewritten in place) or is no regular file; a folder that is no DVC repository is a DataError."""
    if not repo_root.is_dir():
        raise DataError(str(repo_root), "not a folder" if repo_root.exists() else "no such folder (--repo)")
    if not (repo_root / ".dvc").is_dir():
        raise DataError(str(repo_root), "not a DVC repository (no .dvc folder; `dvc init` makes one)")
    lock = repo_root / "dvc.lock"
    if lock.exists() and not within(lock.resolve(), repo_root.resolve()):
        raise ConfigError(f"{lock}: leads to {lock.resolve()}, outside the repository {repo_root}; nothing was changed")
    if lock.exists():
        refuse_special(lock, "dvc.lock file")
    return lock


def prune_lock(repo_root: Path) -> list[str]:
    """Drop (and return) the dvc.lock entries of stages dvc.yaml no longer defines, with DVC's own YAML
    writer. A repository DVC cannot read is a one-line DataError naming the path, and nothing changes."""
    lock = dvc_lock(repo_root)
    if not lock.exists():
        return []
    locked = _locked_stages(lock)
    from dvc.exceptions import DvcException
    from dvc.repo import Repo
    from dvc.utils.serialize import modify_yaml

    try:
        with Repo(str(repo_root)) as repo:
            defined = [stage.name for stage in repo.index.stages if hasattr(stage, "cmd")]
    except DvcException as exc:  # SCMError (no git), a broken dvc.yaml, ...: DVC's own words, one line
        raise DataError(str(repo_root), f"DVC cannot read this repository: {exc}") from None
    dropped = stale_lock_stages(locked, defined)
    if dropped:  # an unchanged lock is left as it is, byte for byte
        with modify_yaml(str(lock)) as data:
            for name in dropped:
                del data["stages"][name]
    return dropped


def _locked_stages(lock: Path) -> list[str]:
    """The stage names of a dvc.lock (read strictly: the file is rewritten afterwards)."""
    data = load_yaml_file(lock, error=DataError)
    if data is None:
        return []
    stages = data.get("stages") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(stages, (dict, type(None))):
        raise DataError(str(lock), "not a dvc.lock: expected a mapping with a 'stages' mapping")
    return list(stages or {})
