"""Pipeline wall times on the embedded demo (a benchmark, not a test).

In a fresh copy of the repository: (1) the cold demo run (`snakemake --cores 2`: generation,
validation, inference for every model in params, scoring, tables, MLflow), (2) a no-op `snakemake`,
(3) a no-op `dvc repro`. Each is reported with a reference measured in the same run: for the cold
run, the same stage commands run by hand, one after another, in a second fresh copy (so the ratio is
what Snakemake, its DAG and the final `dvc commit` add); for the no-ops, the bare start-up of the
same tool (`snakemake --version`, `dvc --version`), the practical lower bound of a no-op. Target:
no-op reruns under 3 s each.

Usage: python benchmarks/bench_pipeline.py [--repeat 3] [--markdown docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def fresh_copy(dest: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    for f in files:
        if (REPO / f).is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, dest / f)
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench"],
    ):
        subprocess.run(cmd, cwd=dest, check=True, capture_output=True)


def stage_commands() -> list[list[str]]:
    """The pipeline's stage commands, in order, as the rules run them (for the hand-run reference)."""
    import yaml

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    cmds = [["socialbench", "demo", "--params", "params.yaml", "--out-dir", "data/raw/moca_demo"]]
    for split in ("test", "dev"):
        cmds.append(
            [
                "socialbench",
                "prepare",
                "--raw",
                f"data/raw/moca_demo/{split}.jsonl",
                "--out",
                f"data/interim/moca/{split}.jsonl",
                "--report",
                f"results/reports/moca_prepare_{split}.jsonl",
            ]
        )
    cmds.append(
        [
            "socialbench",
            "moca",
            "frames",
            "--input",
            "data/interim/moca/test.jsonl",
            "--output",
            "data/processed/moca/test.jsonl",
            "--input",
            "data/interim/moca/dev.jsonl",
            "--output",
            "data/processed/moca/dev.jsonl",
            "--frames-dir",
            "data/interim/frames",
            "--report",
            "results/reports/media.jsonl",
            "--report-md",
            "results/reports/media.md",
            "--params",
            "params.yaml",
            "--prune",
        ]
    )
    scores = []
    for model in params["models"]:
        for method in params.get("moca", {}).get("methods", ["direct"]):
            pred, score = (
                f"results/predictions/moca/{model}/{method}.jsonl",
                f"results/scores/moca/{model}/{method}.json",
            )
            cmds.append(
                [
                    "socialbench",
                    "infer",
                    "--instances",
                    "data/processed/moca/test.jsonl",
                    "--dev",
                    "data/processed/moca/dev.jsonl",
                    "--model",
                    model,
                    "--method",
                    method,
                    "--out",
                    pred,
                    "--stats",
                    f"results/runs/moca/{model}/{method}.stats.json",
                ]
            )
            cmds.append(
                [
                    "socialbench",
                    "score",
                    "--instances",
                    "data/processed/moca/test.jsonl",
                    "--predictions",
                    pred,
                    "--out",
                    score,
                ]
            )
            scores.append(score)
    cmds.append(
        [
            "socialbench",
            "tables",
            "--out-dir",
            "results/tables/moca",
            "--headline",
            "results/metrics/moca.json",
            *scores,
        ]
    )
    cmds.append(
        [
            "socialbench",
            "track",
            "--instances",
            "data/processed/moca/test.jsonl",
            "--predictions-dir",
            "results/predictions/moca",
            "--stats-dir",
            "results/runs/moca",
            "--tables-dir",
            "results/tables/moca",
            "--out",
            "results/mlflow/moca.json",
            *scores,
        ]
    )
    return cmds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of each no-op measurement")
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DVC_NO_ANALYTICS": "1",
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "repo"
        fresh_copy(work)
        cold = timed(["snakemake", "--cores", str(args.cores)], work, env)
        by_hand = Path(tmp) / "by_hand"
        fresh_copy(by_hand)
        start = time.perf_counter()
        for cmd in stage_commands():
            timed(cmd, by_hand, env)
        hand = time.perf_counter() - start
        rows = []
        for name, cmd, ref in (
            ("no-op `snakemake`", ["snakemake", "--cores", str(args.cores)], ["snakemake", "--version"]),
            ("no-op `dvc repro`", ["dvc", "repro"], ["dvc", "--version"]),
        ):
            t = statistics.median(timed(cmd, work, env) for _ in range(args.repeat))
            r = statistics.median(timed(ref, work, env) for _ in range(args.repeat))
            rows.append((name, t, " ".join(ref), r))
    print("| measurement | wall time (s) | reference | reference (s) | ratio |")
    print("|---|---:|---|---:|---:|")
    print(
        f"| cold demo run (`snakemake --cores {args.cores}`) | {cold:.2f} | the stage commands by hand, in sequence | {hand:.2f} | {cold / hand:.2f}x |"
    )
    for name, t, ref, r in rows:
        verdict = "meets" if t < 3.0 else "misses"
        print(f"| {name} | {t:.2f} ({verdict} < 3 s) | `{ref}` | {r:.2f} | {t / r:.2f}x |")


if __name__ == "__main__":
    main()
