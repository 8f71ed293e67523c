"""MLflow tracking at the MoCA paper's size, beside the code before a change (issue 41; a benchmark, not a test).

Builds (once; ``--keep`` reuses it) a copy of the repository with the demo's params at the MoCA paper's
3,108 test instances (936/1,179/993 per scenario, 878 video-text: ``bench_paper.moca_counts(1.0)``) and
the demo's 15 MoCA runs, and runs ``snakemake --cores 1 results/mlflow/moca.json`` in it (the MoCA
target: generation to tracking), every job measured by bench_paper's shim (wall, CPU, peak RSS).

Then the track job alone, on those same results, with each ``--src`` in turn (e.g. the reference: a
worktree of main at the base commit, and this checkout), ``--rounds`` times alternately, each against an
empty store (mlflow.db and mlartifacts/ removed first), then once more unchanged (which must log
nothing). Per code: wall and CPU of the track, the files each run holds in mlartifacts/ and the bytes
against those of the files it was given. The track job's share of the run is its wall time over the
MoCA target's wall time with that track in place of the one it ran with. On a shared machine compare
the ratios measured in one run, not the absolute times.

``--checkout DIR``: no build; the track jobs of ``--benchmarks`` in a checkout that ran them (e.g. the
demo's), their command lines as Snakemake prints them.

Usage: python perf/bench_track.py --keep DIR [--build-only] [--src NAME=PATH/src ...] [--rounds 2] [--json OUT]
       python perf/bench_track.py --checkout DIR --benchmarks moca,meetingtom --src ... [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "perf"))

from bench_paper import moca_counts  # noqa: E402
from job_shim import LOG_VAR, install  # noqa: E402

from tests.helpers.pipeline import git_snapshot, link_shared, pipeline_env, repo_copy  # noqa: E402

TARGET = "results/mlflow/moca.json"
#: What the track logs, read from: its given bytes are at most these folders' bytes.
GIVEN = ("predictions", "scores", "runs", "traces", "viewer", "tables")


def build(root: Path) -> dict:
    """The copy at the paper's size and one run of the MoCA target in it (skipped when done before)."""
    work, log, done = root / "repo", root / "jobs.jsonl", root / "build.json"
    if done.is_file():
        return json.loads(done.read_text())
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    repo_copy(work)
    link_shared(work)
    bindir = root / "bin"
    real = shutil.which("socialbench", path=str(Path(sys.executable).parent)) or shutil.which("socialbench")
    install(bindir, {"socialbench": real})
    env = {
        **pipeline_env(work),
        LOG_VAR: str(log),
        "PATH": f"{bindir}{os.pathsep}{pipeline_env(work)['PATH']}",
    }
    params = yaml.safe_load((work / "params.yaml").read_text())
    params["moca"]["demo"].update(moca_counts(1.0))
    (work / "params.yaml").write_text(yaml.safe_dump(json.loads(json.dumps(params)), sort_keys=False))
    subprocess.run(["snakemake", "-n", "--quiet", "--cores", "1"], cwd=work, env=env, capture_output=True)
    git_snapshot(work, env)
    log.write_text("")
    start = time.perf_counter()
    proc = subprocess.run(["snakemake", "--cores", "1", TARGET], cwd=work, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"snakemake failed in {work}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    jobs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    track = next(j for j in jobs if j["argv"][:1] == ["track"])
    out = {"target_wall_s": wall, "jobs": len(jobs), "cpu_s": sum(j["cpu_s"] for j in jobs), "track": track}
    done.write_text(json.dumps(out, indent=1))
    return out


def track_argv(work: Path, benchmark: str) -> list[str]:
    """The track job's command line (after ``socialbench``) as Snakemake would run it in ``work``."""
    proc = subprocess.run(
        [
            "snakemake",
            "-n",
            "-p",
            "--cores",
            "1",
            "--forcerun",
            f"{benchmark}_track",
            f"results/mlflow/{benchmark}.json",
        ],
        cwd=work,
        env=pipeline_env(work),
        capture_output=True,
        text=True,
    )
    line = next(x for x in proc.stdout.splitlines() if "socialbench track " in x)  # "Shell command: ..."
    return shlex.split(line[line.index("socialbench track ") :].split(" > ")[0])[1:]


def store_figures(work: Path, benchmark: str = "moca") -> dict:
    """Files per run folder of mlartifacts/ (the most, and how many runs), and its bytes."""
    per_run: Counter = Counter()
    total = 0
    for f in (work / "mlartifacts").rglob("*"):
        if f.is_file():
            rel = f.relative_to(work / "mlartifacts").parts  # [<experiment>/]<run>/artifacts/...
            per_run[rel[rel.index("artifacts") - 1]] += 1
            total += f.stat().st_size
    given = sum(f.stat().st_size for k in GIVEN for f in (work / "results" / k / benchmark).rglob("*") if f.is_file())
    return {
        "runs": len(per_run),
        "max_files_a_run": max(per_run.values(), default=0),
        "files": sum(per_run.values()),
        "bytes": total,
        "given_folders_bytes": given,
    }


def track(work: Path, src: Path, argv: list[str], fresh: bool) -> dict:
    """One track job with the code at ``src``; a fresh store first when ``fresh``."""
    if fresh:
        for p in ("mlflow.db", "mlflow.db.lock", "mlartifacts"):
            path = work / p
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    env = {**pipeline_env(work), "PYTHONPATH": str(src)}
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.chdir(work)
        os.execvpe("socialbench", ["socialbench", *argv], env)
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"track with {src} failed")
    return {"wall_s": time.perf_counter() - start, "cpu_s": ru.ru_utime + ru.ru_stime, "maxrss_mb": ru.ru_maxrss / 1024}


def demo_tracks(work: Path, benchmarks: list[str], srcs: dict[str, str], rounds: int) -> int:
    """Each benchmark's track job in turn (the first against an empty store) with each code, alternately."""
    argvs = {b: track_argv(work, b) for b in benchmarks}
    aside = work / "mlflow-before-bench"
    if not aside.exists():  # the checkout's own store, put back at the end
        aside.mkdir()
        for p in ("mlflow.db", "mlartifacts"):
            if (work / p).exists():
                shutil.move(str(work / p), str(aside / p))
    times: dict[str, list[float]] = {n: [] for n in srcs}
    cpus: dict[str, list[float]] = {n: [] for n in srcs}
    try:
        for _ in range(rounds):
            for name, src in srcs.items():
                got = [track(work, Path(src), argvs[b], fresh=(k == 0)) for k, b in enumerate(benchmarks)]
                files = store_figures(work)
                times[name].append(sum(g["wall_s"] for g in got))
                cpus[name].append(sum(g["cpu_s"] for g in got))
                each = [f"{g['wall_s']:.1f} s / {g['cpu_s']:.1f} CPU-s" for g in got]
                print(name, each, files["files"], "files", flush=True)
    finally:
        for p in ("mlflow.db", "mlflow.db.lock", "mlartifacts"):
            path = work / p
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        for p in aside.iterdir():
            shutil.move(str(p), str(work / p.name))
        aside.rmdir()
    for name in srcs:
        print(f"{name}: track jobs {min(times[name]):.1f} s wall, {min(cpus[name]):.1f} CPU-s (min of {rounds})")
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, help="work folder (built once, reused)")
    ap.add_argument("--checkout", type=Path, help="no build: a checkout whose track jobs ran (the demo's)")
    ap.add_argument("--benchmarks", default="moca", help="with --checkout: whose track jobs, in turn")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--src", action="append", default=[], help="NAME=PATH to a src/ folder (repeatable)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    srcs = dict(s.split("=", 1) for s in args.src)
    if args.checkout:
        return demo_tracks(args.checkout, args.benchmarks.split(","), srcs, args.rounds)
    args.keep.mkdir(parents=True, exist_ok=True)
    built = build(args.keep)
    print(
        json.dumps({k: v for k, v in built.items() if k != "track"}),
        "track in the build:",
        f"{built['track']['wall_s']:.1f} s wall",
        flush=True,
    )
    if args.build_only:
        return 0
    work = args.keep / "repo"
    results: dict = {name: {"cold": [], "rerun": []} for name in srcs}
    for _ in range(args.rounds):
        for name, src in srcs.items():
            cold = track(work, Path(src), built["track"]["argv"], fresh=True)
            cold.update(store_figures(work))
            rerun = track(work, Path(src), built["track"]["argv"], fresh=False)
            rerun["files_after"] = store_figures(work)["files"]
            results[name]["cold"].append(cold)
            results[name]["rerun"].append(rerun)
            print(name, json.dumps(cold), "rerun", json.dumps(rerun), flush=True)
    rest = built["target_wall_s"] - built["track"]["wall_s"]
    print(
        "\n| code | track wall (min of rounds) | CPU | share of the MoCA target | files in mlartifacts "
        "| most files a run | mlartifacts bytes / the folders it reads | unchanged rerun |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        c = min(r["cold"], key=lambda x: x["wall_s"])
        rr = min(r["rerun"], key=lambda x: x["wall_s"])
        print(
            f"| {name} | {c['wall_s']:.1f} s | {c['cpu_s']:.1f} s | {100 * c['wall_s'] / (rest + c['wall_s']):.0f} % "
            f"| {c['files']:,} | {c['max_files_a_run']:,} "
            f"| {c['bytes'] / 1e6:.0f} MB / {c['given_folders_bytes'] / 1e6:.0f} MB "
            f"| {rr['wall_s']:.1f} s, {rr['files_after'] - c['files']} files |"
        )
    if args.json:
        args.json.write_text(json.dumps({"build": built, "tracks": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
