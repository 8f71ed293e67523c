"""Write records.dvc: the run's outputs that no DVC stage declares, so `dvc push` takes them too.

The pipeline's DVC stages declare the data, media, predictions, traces, scores, tables and metrics;
Snakemake also writes files no stage declares: the run accounting (`results/runs/`, with wall-clock
times, so never the same bytes twice and kept out of dvc.lock), the trace viewer (`results/viewer/`),
each benchmark's headline metrics file and the closing `dvc commit`'s marker. A fresh clone without
them is not finished for Snakemake: it would rerun inference for the missing stats files. This
script lists them, grouped into the largest folders that hold no stage output, as the outs of one
hand-kept `.dvc` file at the repository root; `dvc commit --force records.dvc` then hashes them
(scripts/dvc_remote.sh push). The file is a snapshot taken at push time; the pipeline never writes it.

    python scripts/dvc_records.py [--repo .] [--out records.dvc]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import yaml

# the trees a run writes; logs/ is left out (Snakemake never checks a log to decide a rerun)
ROOTS = ("data", "results")


def stage_outs(lock: dict) -> set[str]:
    """Every output path dvc.lock records (its stages' outs, metrics and plots alike)."""
    return {o["path"] for stage in lock.get("stages", {}).values() for o in stage.get("outs", [])}


def uncovered(files: Iterable[str], outs: set[str]) -> list[str]:
    """The paths for ``files`` (repository-relative, posix) that no out covers: each file outside
    every out is represented by its highest ancestor folder that neither is inside an out nor holds
    one (the file itself when there is none), so a whole folder such as results/runs is one entry.
    Files git tracks belong in ``outs`` too: they travel with the clone, and DVC refuses them."""
    out_parts = [PurePosixPath(o).parts for o in outs]

    def clear(parts: tuple[str, ...]) -> bool:
        # neither inside an out nor above one
        return not any(parts[: len(o)] == o or o[: len(parts)] == parts for o in out_parts)

    chosen: set[str] = set()
    for f in files:
        parts = PurePosixPath(f).parts
        if not clear(parts):
            continue
        # the top-level roots (data/, results/) are never chosen whole: they hold stage outputs
        for n in range(2, len(parts) + 1):
            if clear(parts[:n]):
                chosen.add(PurePosixPath(*parts[:n]).as_posix())
                break
    return sorted(chosen)


def render(paths: list[str]) -> str:
    """records.dvc's text without hashes (`dvc commit --force records.dvc` adds them)."""
    head = "# Written by scripts/dvc_records.py at push time: outputs no DVC stage declares.\n"
    return head + yaml.safe_dump({"outs": [{"path": p} for p in paths]}, sort_keys=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=Path("."))
    ap.add_argument("--out", default="records.dvc")
    args = ap.parse_args(argv)
    repo = args.repo.resolve()
    lock_path = repo / "dvc.lock"
    if not lock_path.is_file():
        print(f"error: {lock_path}: no dvc.lock (run the pipeline first)", file=sys.stderr)
        return 2
    outs = stage_outs(yaml.safe_load(lock_path.read_text("utf-8")) or {})
    git = subprocess.run(["git", "ls-files", "-z", *ROOTS], cwd=repo, capture_output=True, check=True)
    outs |= set(filter(None, git.stdout.decode().split("\0")))
    files = [
        p.relative_to(repo).as_posix() for root in ROOTS if (repo / root).is_dir() for p in (repo / root).rglob("*")
    ]
    # links are left out: DVC would store the target's bytes (data/raw/... links point into ../shared)
    paths = uncovered((f for f in files if (repo / f).is_file() and not (repo / f).is_symlink()), outs)
    (repo / args.out).write_text(render(paths), "utf-8")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
