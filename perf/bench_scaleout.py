"""Scale-out at demo scale: Slurm against the local executor, and 1 vs 2 pipelines on shared stores (a
benchmark, not a test).

(a) Slurm overhead. The whole demo pipeline in two fresh copies of the repository (git's files,
    ../shared beside each), one after the other in the same run: `snakemake --cores 2` (the local
    executor: the reference) and `snakemake --profile profiles/slurm` on a one-node Slurm cluster
    started on this machine by scripts/slurm_cluster.sh (slurmctld and slurmd on localhost, no
    slurmdbd: the plugin polls `squeue`, `sacct -c` reads the job completion log), as
    tests/test_slurm.py runs it (its whole-demo test, marked scaleout). Reported: the wall time of each
    and their ratio, the jobs submitted to Slurm and those Snakemake ran itself (localrules), how many
    submitted jobs Slurm records as COMPLETED, and whether predictions and scores are byte-identical
    between the two runs.

(b) Shared stores. A PostgreSQL cluster on loopback (scripts/pg_services.sh) holds the request cache
    (SOCIALBENCH_CACHE_URL) and the store of an MLflow tracking server (scripts/mlflow_server.sh;
    MLFLOW_TRACKING_URI). The MoCA demo end to end (`snakemake --cores 2 moca`: data, frames,
    inference of every model, scores, tables, viewer, MLflow tracking) runs once alone, then in two
    fresh clones at the same moment, each scenario on its own empty cache database and its own MLflow
    experiment. Reported: wall time (each pipeline, and first start to last end), calls made to the
    model backends (cache misses in the runs' stats files, summed over the clones; the cache's
    entries), MLflow runs created (child runs, their distinct evaluation keys, parent runs).

Every service the script starts (Slurm daemons, PostgreSQL, the MLflow server) is stopped on the way
out, failures and SIGTERM included. Needs root and the Debian packages slurm-wlm, munge and
postgresql (the scripts install them with apt-get when absent). Refuses to run while Slurm daemons
or munged already run (another user's cluster would be reconfigured and stopped).

Usage: python perf/bench_scaleout.py [--parts slurm,stores] [--json out.json] [--markdown docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.helpers.pipeline import git_snapshot, link_shared, pipeline_env, repo_copy  # noqa: E402

MARK_BEGIN = "<!-- bench_scaleout:begin -->"
MARK_END = "<!-- bench_scaleout:end -->"
SLURM_SCRIPT = REPO / "scripts" / "slurm_cluster.sh"
PG_SCRIPT = REPO / "scripts" / "pg_services.sh"
MLFLOW_SCRIPT = REPO / "scripts" / "mlflow_server.sh"
COMPARED = ("results/predictions", "results/scores")
#: The test cluster has no accounts and no slurmdbd (tests/test_slurm.py).
SLURM_CMD = [
    "snakemake",
    "--profile",
    "profiles/slurm",
    "--slurm-no-account",
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "5",
]
STORES_TARGET = ["snakemake", "--cores", "2", "moca"]
EVAL_KEY_TAG = "socialbench.eval_key"


class Failed(RuntimeError):
    pass


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """(wall seconds, stdout + stderr) of a command that must succeed."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise Failed(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return elapsed, proc.stdout + proc.stderr


def fresh_clone(parent: Path, extra_env: dict[str, str] | None = None, edit=None) -> tuple[Path, dict[str, str]]:
    """A fresh copy of the repository at parent/repo (../shared beside it), committed, and its env."""
    work = repo_copy(parent / "repo", REPO)
    link_shared(work, REPO)
    if edit:
        edit(work)
    env = {**pipeline_env(work), **(extra_env or {})}
    git_snapshot(work, env)
    return work, env


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


# ---- (a) Slurm against the local executor ---------------------------------------------------------------
def submitted_jobs(out: str) -> dict[str, str]:
    """{Slurm job id: rule} of every job the plugin submitted."""
    pattern = r"has been submitted with SLURM jobid (\d+) \(log: \S*/rule_([^/]+)/"
    return {m.group(1): m.group(2) for m in re.finditer(pattern, out)}


def local_jobs(out: str) -> list[str]:
    """Rules of the jobs Snakemake ran in its own process under a cluster executor ("localrule x:")."""
    return re.findall(r"^localrule (\S+):$", out, flags=re.M)


def steps_done(out: str) -> int:
    """The job count of Snakemake's closing "N of N steps (100%) done"."""
    found = re.findall(r"(\d+) of \1 steps \(100%\) done", out)
    return int(found[-1]) if found else 0


def completed_in_slurm() -> set[str]:
    """Slurm job ids the job completion log records as COMPLETED (sacct -c reads it)."""
    proc = subprocess.run(["sacct", "-c", "-n", "-P", "-o", "JobID,State"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise Failed(f"sacct -c failed: {proc.stderr.strip()}")
    return {line.split("|")[0] for line in proc.stdout.splitlines() if line.endswith("|COMPLETED")}


def files(work: Path, folder: str) -> dict[Path, bytes]:
    return {p.relative_to(work): p.read_bytes() for p in (work / folder).rglob("*") if p.is_file()}


def identical(a: Path, b: Path) -> bool:
    for folder in COMPARED:
        fa, fb = files(a, folder), files(b, folder)
        if not fa or fa != fb:
            return False
    return True


def daemons_running() -> list[str]:
    return [d for d in ("slurmctld", "slurmd", "munged") if subprocess.run(["pgrep", "-x", d]).returncode == 0]


@contextlib.contextmanager
def slurm_cluster(state: Path):
    """The one-node cluster, stopped (its jobs cancelled first) however the block ends."""
    running = daemons_running()
    if running:
        raise Failed(f"{', '.join(running)} already running: another Slurm cluster is in use here, not touching it")
    env = {**os.environ, "SLURM_TEST_DIR": str(state)}
    try:
        proc = subprocess.run(["bash", str(SLURM_SCRIPT), "start"], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise Failed(f"slurm_cluster.sh start failed:\n{proc.stdout}\n{proc.stderr}")
        yield
    finally:
        subprocess.run(["scancel", "--partition", "debug"], env=env, capture_output=True)  # jobs left by a failure
        subprocess.run(["bash", str(SLURM_SCRIPT), "stop"], env=env, capture_output=True, timeout=120)


def measure_slurm(root: Path) -> dict[str, Any]:
    local, local_env = fresh_clone(root / "local")
    load_before = load()
    local_s, local_out = timed(["snakemake", "--cores", "2"], local, local_env)
    print(f"local executor: {local_s:.0f} s", flush=True)
    remote, remote_env = fresh_clone(root / "slurm")
    with slurm_cluster(root / "slurm-state"):
        slurm_s, slurm_out = timed(SLURM_CMD, remote, remote_env)
        completed = completed_in_slurm()
    print(f"slurm executor: {slurm_s:.0f} s", flush=True)
    submitted = submitted_jobs(slurm_out)
    return {
        "local_s": local_s,
        "slurm_s": slurm_s,
        "local_jobs": steps_done(local_out),
        "slurm_jobs": steps_done(slurm_out),
        "submitted": len(submitted),
        "submitted_rules": sorted(set(submitted.values())),
        "ran_locally": len(local_jobs(slurm_out)),
        "completed_in_slurm": len(set(submitted) & completed),
        "identical": identical(local, remote),
        "load": f"{load_before} before, {load()} after",
    }


# ---- (b) 1 vs 2 pipelines on the PostgreSQL cache and the MLflow server -----------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """A throwaway PostgreSQL cluster on loopback; ``url(db)`` creates the database on first use."""

    def __init__(self) -> None:
        # a folder of its own: the cluster runs as the postgres user, who cannot enter root's 0700 temp folder
        self.dir = Path(tempfile.mkdtemp(prefix="bench-scaleout-pg-"))
        self.port, self.user, self.password = free_port(), "bench", secrets.token_hex(12)

    def url(self, db: str) -> str:
        env = {**os.environ, "PGSERVICE_PASSWORD": self.password}
        cmd = ["bash", str(PG_SCRIPT), "start", str(self.dir), str(self.port), db, self.user]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise Failed(f"pg_services.sh start failed: {proc.stderr.strip()}")
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{db}"

    def stop(self) -> None:
        subprocess.run(["bash", str(PG_SCRIPT), "stop", str(self.dir)], capture_output=True, timeout=120)
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def postgres():
    proc = subprocess.run(["bash", str(PG_SCRIPT), "install"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise Failed(f"pg_services.sh install failed: {proc.stderr.strip()}")
    pg = Postgres()
    try:
        yield pg
    finally:
        pg.stop()


@contextlib.contextmanager
def mlflow_server(root: Path, store_url: str):
    """The tracking server on a free loopback port (its URL), its process group ended on the way out."""
    port = free_port()
    log = open(root / "mlflow-server.log", "wb")  # noqa: SIM115 - closed below
    env = {**os.environ, "MLFLOW_BACKEND_STORE_URI": store_url, "MLFLOW_WORKERS": "1"}
    proc = subprocess.Popen(
        ["bash", str(MLFLOW_SCRIPT), str(root / "mlartifacts"), str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # the first start migrates the PostgreSQL schema
        while True:
            try:
                urllib.request.urlopen(f"{url}/health", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise Failed(
                        f"mlflow server did not start: {(root / 'mlflow-server.log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.5)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:  # workers waiting on idle keep-alive connections
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        log.close()


def set_experiment(name: str):
    def edit(work: Path) -> None:
        params = work / "params.yaml"
        text = params.read_text()
        old = "  experiment: socialbench "
        if old not in text:
            raise Failed("params.yaml: no `experiment: socialbench` line under mlflow to rename")
        params.write_text(text.replace(old, f"  experiment: {name} ", 1))

    return edit


def calls_made(work: Path) -> tuple[int, int]:
    """(calls this clone's inference made, requests it needed): summed over the runs' stats files."""
    calls = requests = 0
    for p in (work / "results" / "runs" / "moca").rglob("*.json"):
        stats = json.loads(p.read_text())
        calls += stats["cache_misses"]
        requests += stats["requests"]
    return calls, requests


def cache_entries(work: Path, env: dict[str, str]) -> int:
    _, out = timed(["socialbench", "cache", "stats", "--json"], work, env)
    return json.loads(out[out.index("{") :])["entries"]


def mlflow_runs(url: str, experiment: str) -> dict[str, int]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(url)
    exp = client.get_experiment_by_name(experiment)
    runs = client.search_runs([exp.experiment_id], max_results=5000) if exp else []
    keys = [r.data.tags[EVAL_KEY_TAG] for r in runs if EVAL_KEY_TAG in r.data.tags]
    return {
        "child_runs": len(keys),
        "distinct_keys": len(set(keys)),
        "parent_runs": len(runs) - len(keys),
        "unfinished": sum(r.info.status != "FINISHED" for r in runs),
    }


def run_pipelines(clones: list[tuple[Path, dict[str, str]]]) -> tuple[float, list[float]]:
    """Start the pipelines at the same moment: (first start to last end, each one's wall time)."""
    walls: list[float | None] = [None] * len(clones)
    errors: list[str] = []
    barrier = threading.Barrier(len(clones))

    def one(i: int) -> None:
        barrier.wait()
        try:
            walls[i] = timed(STORES_TARGET, *clones[i])[0]
        except Failed as exc:
            errors.append(str(exc))

    start = time.perf_counter()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(clones))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = time.perf_counter() - start
    if errors:
        raise Failed("\n".join(errors))
    return total, walls


def measure_stores(root: Path) -> list[dict[str, Any]]:
    rows = []
    with postgres() as pg, mlflow_server(root, pg.url("mlflow")) as tracking:
        for n in (1, 2):
            experiment = f"bench-{n}-pipelines"
            cache_url = pg.url(f"cache_{n}")
            stores = {"SOCIALBENCH_CACHE_URL": cache_url, "MLFLOW_TRACKING_URI": tracking}
            clones = [
                fresh_clone(root / f"stores-{n}" / f"clone-{i}", stores, set_experiment(experiment)) for i in range(n)
            ]
            load_before = load()
            total, walls = run_pipelines(clones)
            counted = [calls_made(work) for work, _ in clones]
            rows.append(
                {
                    "pipelines": n,
                    "wall_s": total,
                    "each_s": walls,
                    "calls": sum(c for c, _ in counted),
                    "calls_each": [c for c, _ in counted],
                    "requests": sum(r for _, r in counted),
                    "cache_entries": cache_entries(*clones[0]),
                    **mlflow_runs(tracking, experiment),
                    "load": f"{load_before} before, {load()} after",
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    return rows


# ---- report --------------------------------------------------------------------------------------------
def markdown(slurm: dict[str, Any] | None, stores: list[dict[str, Any]] | None, note: str) -> str:
    lines = [note, ""]
    if slurm:
        lines += [
            "| executor | wall | x local | jobs | submitted to Slurm | run by Snakemake itself | COMPLETED in Slurm |",
            "|---|---:|---:|---:|---:|---:|---:|",
            f"| local (`--cores 2`) | {slurm['local_s']:.0f} s | 1.00x | {slurm['local_jobs']} | - | "
            f"{slurm['local_jobs']} | - |",
            f"| Slurm (`--profile profiles/slurm`) | {slurm['slurm_s']:.0f} s | "
            f"**{slurm['slurm_s'] / slurm['local_s']:.2f}x** | {slurm['slurm_jobs']} | {slurm['submitted']} | "
            f"{slurm['ran_locally']} | {slurm['completed_in_slurm']} |",
            "",
            f"Predictions and scores byte-identical between the two runs: {'yes' if slurm['identical'] else 'NO'}. "
            f"Load average (1/5/15 min): {slurm['load']}.",
            "",
        ]
    if stores:
        lines += [
            "| pipelines at once | wall (first start to last end) | each pipeline | x one alone | calls to "
            "the model backends (each) | requests needed | cache entries | MLflow child runs (distinct) "
            "| parent runs | load average before, after |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        alone = stores[0]["wall_s"]
        for r in stores:
            each = " / ".join(f"{w:.0f} s" for w in r["each_s"])
            calls_each = " + ".join(str(c) for c in r["calls_each"])
            lines.append(
                f"| {r['pipelines']} | {r['wall_s']:.0f} s | {each} | {r['wall_s'] / alone:.2f}x | "
                f"{r['calls']} ({calls_each}) | {r['requests']} | {r['cache_entries']} | "
                f"{r['child_runs']} ({r['distinct_keys']}) | {r['parent_runs']} | {r['load']} |"
            )
    return "\n".join(lines).rstrip()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="slurm,stores", help="slurm, stores or both (comma-separated)")
    ap.add_argument("--json", type=Path, help="write the measurements here")
    ap.add_argument("--markdown", type=Path, help="replace the marked section of this file with the tables")
    args = ap.parse_args(argv)
    parts = set(args.parts.split(","))
    if os.geteuid() != 0:
        sys.exit("bench_scaleout: run as root (it installs packages with apt-get and starts daemons)")
    # SIGTERM ends the run through the `finally` blocks, so every service started is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench_scaleout: terminated"))
    started = datetime.now(UTC)
    slurm = stores = None
    root = Path(tempfile.mkdtemp(prefix="bench-scaleout-"))
    try:
        if "slurm" in parts:
            slurm = measure_slurm(root)
            print(json.dumps(slurm), flush=True)
        if "stores" in parts:
            stores = measure_stores(root)
    except Failed as exc:
        sys.exit(f"bench_scaleout: {exc}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    note = (
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {platform.node()} ({os.cpu_count()} CPUs, "
        f"Python {platform.python_version()})."
    )
    table = markdown(slurm, stores, note)
    print(table)
    if args.json:
        args.json.write_text(json.dumps({"slurm": slurm, "stores": stores, "started": started.isoformat()}, indent=2))
    if args.markdown:
        from bench_pipeline import replace_marked  # its sibling script (benchmarks/ is on sys.path)

        replace_marked(args.markdown, MARK_BEGIN, MARK_END, table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
