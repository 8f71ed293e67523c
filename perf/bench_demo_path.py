"""The cold demo's CPU per job and its critical path, for one or more commits side by side (issue 41.4;
a benchmark, not a test).

For each commit: a fresh clone of this repository at that commit (../shared beside it, its package's
bytecode written as set-up writes it), then `nice -n 19 snakemake --cores 2` with this checkout's .venv.
The commits' runs start together, so they share the machine's load: on a shared machine wall times say
little, the CPU seconds compare. Every job's command (`socialbench ...`; an older commit's closing `dvc commit`) runs
through a shim that records its start, end and CPU time (``wait4``: children such as ffmpeg included).

Printed per commit: wall time, CPU of the whole run and of the jobs, the CPU per kind of job, and the
chain of jobs that ends last (each job's predecessor: the one that ended last before it started), with
each link's CPU. ``--keep DIR`` keeps the clones and the per-job logs (``DIR/<commit>/jobs.jsonl``).

Usage: python perf/bench_demo_path.py --commit 2e8d11c [--commit HEAD] [--keep DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from job_shim import LOG_VAR, install

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def prepare(commit: str, root: Path) -> tuple[Path, dict[str, str]]:
    """A clone at ``commit`` under ``root`` with its shims; the environment its run uses."""
    work = root / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO), str(work)], check=True)
    subprocess.run(["git", "checkout", "-q", commit], cwd=work, check=True)
    shared = REPO.parent / "shared"
    if shared.is_dir():
        (root / "shared").symlink_to(shared.resolve())
    subprocess.run([sys.executable, "-m", "compileall", "-q", "src/socialbench"], cwd=work, check=True)
    if (work / "src/socialbench/stages/dvc_yaml.py").read_text().count("def summarize_package"):
        summarize = "from socialbench.stages import dvc_yaml; dvc_yaml.summarize_package()"
        subprocess.run([sys.executable, "-c", summarize], cwd=work, env={**os.environ, "PYTHONPATH": "src"}, check=True)
    bindir = root / "bin"
    install(bindir, {prog: str(VENV_BIN / prog) for prog in ("socialbench", "dvc")})
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "SOCIALBENCH_CACHE_URL")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        PATH=f"{bindir}{os.pathsep}{VENV_BIN}{os.pathsep}{env['PATH']}",
        PYTHONPATH=str(work / "src"),
        MLFLOW_DISABLE_TELEMETRY="true",
        DVC_NO_ANALYTICS="1",
        **{LOG_VAR: str(root / "jobs.jsonl")},
    )
    return work, env


def kind(job: dict) -> str:
    argv = job["argv"]
    if job["prog"] == "dvc":
        return "dvc " + argv[0]
    if argv[0] == "infer":
        return f"infer {argv[argv.index('--benchmark') + 1]} {argv[argv.index('--model') + 1]}"
    return " ".join(argv[:2]) if argv[0] in ("meetingtom", "moca") else argv[0]


def chain(jobs: list[dict]) -> list[dict]:
    """The jobs that end last, each after the one that ended last before it started (first to last)."""
    if not jobs:
        return []
    cur = max(jobs, key=lambda j: j["end"])
    out = [cur]
    while True:
        before = [j for j in jobs if j["end"] <= cur["start"] + 0.05]
        if not before:
            return out[::-1]
        cur = max(before, key=lambda j: j["end"])
        out.append(cur)


def report(commit: str, run: dict, jobs: list[dict]) -> str:
    lines = [
        f"## {commit}: wall {run['wall_s']:.1f} s, CPU {run['cpu_s']:.1f} s (jobs {sum(j['cpu_s'] for j in jobs):.1f},"
        f" {len(jobs)} commands), exit {run['rc']}"
    ]
    per = collections.defaultdict(lambda: [0, 0.0])
    for j in jobs:
        per[kind(j)][0] += 1
        per[kind(j)][1] += j["cpu_s"]
    for k, (n, cpu) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"  {cpu:6.1f} CPU-s  {n:2d}x {k}")
    path = chain(jobs)
    lines.append(f"  chain: {sum(j['cpu_s'] for j in path):.1f} CPU-s in {len(path)} jobs")
    for j in path:
        lines.append(f"    {j['cpu_s']:5.1f} CPU-s  {kind(j)}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commit", action="append", required=True, help="a commit to run (repeat for side by side)")
    ap.add_argument("--cores", default="2")
    ap.add_argument("--keep", type=Path, help="work here and keep it (default: a temporary folder)")
    ap.add_argument("--json", type=Path, help="write each run's figures and jobs here")
    args = ap.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-demo-path-"))
    try:
        runs = {}
        for commit in args.commit:
            where = root / commit
            where.mkdir(parents=True)
            work, env = prepare(commit, where)
            cmd = ["nice", "-n", "19", "snakemake", "--cores", args.cores]
            log = open(where / "snakemake.log", "w")  # noqa: SIM115 - closed when the run ends
            runs[commit] = {"proc": subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=log), "log": log}
            runs[commit]["t0"] = time.perf_counter()
        by_pid = {r["proc"].pid: commit for commit, r in runs.items()}
        results = []
        while by_pid:  # each run's CPU from its own wait4, its wall time when it ends
            pid, status, ru = os.wait4(-1, 0)
            commit = by_pid.pop(pid, None)
            if commit is None:
                continue
            r = runs[commit]
            r["proc"].returncode = os.waitstatus_to_exitcode(status)
            r["log"].close()
            run = {
                "wall_s": time.perf_counter() - r["t0"],
                "cpu_s": ru.ru_utime + ru.ru_stime,
                "rc": r["proc"].returncode,
            }
            log_file = root / commit / "jobs.jsonl"
            jobs = [json.loads(x) for x in log_file.read_text().splitlines() if x.strip()] if log_file.exists() else []
            print(report(commit, run, jobs), flush=True)
            results.append({"commit": commit, **run, "jobs": jobs})
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
