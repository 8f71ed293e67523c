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

It writes only its ``.dvc`` file, inside the repository, never through a symlink and never onto what
it reads (dvc.lock, the data and results trees), through the commands' own guard
(``socialbench.core.paths.check_io``); run outside a git checkout, or on a dvc.lock of another shape,
it says so in one line (exit 2) and writes nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import yaml

from socialbench.core.errors import SocialbenchError
from socialbench.core.io import load_yaml_file, one_line, write_text_atomic
from socialbench.core.paths import check_io

# the trees a run writes; logs/ is left out (Snakemake never checks a log to decide a rerun)
ROOTS = ("data", "results")


class LockShape(SocialbenchError):
    """A dvc.lock that is not of the shape DVC writes (``stages: {name: {outs: [{path: ...}]}}``)."""


def stage_outs(lock: object, source: str = "dvc.lock") -> set[str]:
    """Every output path dvc.lock records (its stages' outs, metrics and plots alike); a lock of
    another shape is a LockShape error naming ``source``, the stage and the entry."""
    if lock is None:
        return set()
    if not isinstance(lock, dict) or not isinstance(lock.get("stages", {}), dict):
        raise LockShape(f"{source}: not a dvc.lock (expected a mapping with a 'stages' mapping)")
    paths = set()
    for name, stage in lock.get("stages", {}).items():
        outs = stage.get("outs", []) if isinstance(stage, dict) else None
        if not isinstance(outs, list):
            raise LockShape(f"{source}, stage {name}: not a stage of dvc.lock (expected a mapping with an 'outs' list)")
        for n, out in enumerate(outs):
            if not isinstance(out, dict) or not isinstance(out.get("path"), str) or not out["path"]:
                raise LockShape(f"{source}, stage {name}, outs[{n}]: expected a mapping with a 'path'")
            paths.add(out["path"])
    return paths


def git_toplevel(repo: Path) -> Path | None:
    """The git checkout ``repo`` lies in, or None (no checkout, or no git)."""
    try:
        done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=repo, capture_output=True, text=True)
    except OSError:
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


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
    ap.add_argument("--out", default="records.dvc", help="the .dvc file to write, relative to --repo")
    args = ap.parse_args(argv)
    try:
        paths = records(args.repo, args.out)
    except SocialbenchError as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    print("\n".join(paths))
    return 0


def records(repo_arg: Path, out_arg: str) -> list[str]:
    """Write the records file ``out_arg`` of the repository ``repo_arg``; the paths it lists."""
    if not repo_arg.is_dir():
        raise SocialbenchError(f"{repo_arg}: no such folder (--repo takes the repository)")
    repo = repo_arg.resolve()
    if git_toplevel(repo) is None:
        raise SocialbenchError(
            f"{repo}: not a git checkout; scripts/dvc_records.py lists the outputs git does not track,"
            " so it runs in the repository (nothing was written)"
        )
    lock_path = repo / "dvc.lock"
    if not lock_path.is_file():
        raise SocialbenchError(f"{lock_path}: no dvc.lock (run the pipeline first)")
    out = repo / out_arg
    if out.suffix != ".dvc":
        raise SocialbenchError(f"{out}: --out must name a .dvc file (the records of the run; nothing was written)")
    # What it reads: dvc.lock and the trees it lists. The output is none of them, no link, and in the repository.
    check_io(
        {"dvc.lock": lock_path, **{f"{root}/": repo / root for root in ROOTS}},
        {"--out": out},
        folders=tuple(f"{root}/" for root in ROOTS),
        root=repo,
    )
    outs = stage_outs(load_yaml_file(lock_path, error=LockShape, what="dvc.lock"), str(lock_path))
    git = subprocess.run(["git", "ls-files", "-z", *ROOTS], cwd=repo, capture_output=True)
    if git.returncode != 0:
        raise SocialbenchError(f"{repo}: git ls-files failed: {git.stderr.decode(errors='replace').strip()}")
    outs |= set(filter(None, git.stdout.decode().split("\0")))
    files = [
        p.relative_to(repo).as_posix() for root in ROOTS if (repo / root).is_dir() for p in (repo / root).rglob("*")
    ]
    # links are left out: DVC would store the target's bytes (data/raw/... links point into ../shared)
    paths = uncovered((f for f in files if (repo / f).is_file() and not (repo / f).is_symlink()), outs)
    write_text_atomic(out, render(paths))  # a new file renamed into place: never written through a link
    return paths


if __name__ == "__main__":
    sys.exit(main())
