"""The pipeline's bookkeeping cost at demo scale and at paper scale (a benchmark, not a test).

For each scale, in a fresh copy of the repository (git's files, ../shared beside it as beside the
repo):

- the cold pipeline, `snakemake --cores 2` (generation, validation, media, inference of every model,
  scoring, viewer, tables, MLflow, the closing commit);
- a no-op `snakemake -n` against `snakemake --version`, and a no-op `dvc status` against
  `dvc --version`: the tools' bare start-up, measured in the same run, is the reference (the practical
  lower bound of a no-op);
- the closing commit on the finished tree (`socialbench commit`, DVC's `dvc commit --force --no-relink`; the
  runs before the eighth session of 2026-12-07 timed `dvc commit` itself);
- the size of dvc.lock, the number of Snakemake jobs and of DVC stages.

Paper scale is a generated params file: 15 models (chance and prior baselines on both benchmarks,
and CoDAR test doubles on MoCA: no GPU and no API), MoCA's five methods and every MeetingToM run (the
four prompting methods and No Prompt with each ablation of params).

Targets (issue 18): cold demo under 90 s; no-op `snakemake -n` within 2x `snakemake --version`; no-op
`dvc status` under 3 s; the closing `dvc commit` under 10 s at demo scale; dvc.lock under 150 KB at
demo scale.

Usage: python perf/bench_pipeline.py [--scales demo,paper] [--repeat 3] [--markdown docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# the tests' copy of the repository: git's files, the package's bytecode (as after set-up), ../shared beside it
from tests.helpers.pipeline import git_snapshot, link_shared, pipeline_env, repo_copy  # noqa: E402

MARK_BEGIN = "<!-- bench_pipeline:begin -->"
MARK_END = "<!-- bench_pipeline:end -->"


def replace_marked(path: Path, begin: str, end: str, table: str) -> None:
    """Put ``table`` between the markers ``begin`` and ``end`` of ``path`` (a benchmark's section of
    docs/benchmarks.md), leaving the rest of the file as it is."""
    text = path.read_text()
    a, b = text.index(begin) + len(begin), text.index(end)
    path.write_text(text[:a] + "\n" + table + "\n" + text[b:])


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return elapsed, proc.stdout + proc.stderr


def median_time(cmd: list[str], cwd: Path, env: dict[str, str], repeat: int) -> float:
    return statistics.median(timed(cmd, cwd, env)[0] for _ in range(repeat))


def paper_params(params: dict) -> dict:
    """The demo's params at paper scale: 15 models, MoCA's five runs (its methods and CoDAR's ablations),
    every MeetingToM run."""
    out = json.loads(json.dumps(params))
    moca = out["moca"]
    moca["methods"] = [m for m in moca["methods"] if "__" not in m] + [f"codar__{a}" for a in moca["ablations"]]
    codar = [m for m in moca["methods"] if m.split("__")[0] == "codar"]
    free_text = "answers multiple choice only, not CoDAR's free-text stages"
    models: dict[str, dict] = {}
    for i in range(6):
        models[f"chance-{i + 1}"] = {
            "backend": "random",
            "category": "baseline",
            "exclude_methods": {m: free_text for m in codar},
        }
    for i in range(5):
        models[f"prior-{i + 1}"] = {
            "backend": "prior",
            "category": "baseline",
            "exclude_methods": {m: free_text for m in codar},
        }
    for i in range(4):
        models[f"codar-double-{i + 1}"] = {
            "backend": "codar_script",
            "category": "pipeline check (scripted test double, not a result)",
            "benchmarks": ["moca"],
            "options": {"reject_every": i + 2},
        }
    out["models"] = models
    # Option-order runs (<b>.robustness) ask the demo's models: each becomes the first paper model of its
    # backend (random -> chance-1, prior -> prior-1); one with no such model (minilm) is left out.
    for b in ("moca", "meetingtom"):
        rob = out[b].get("robustness")
        if rob:
            backend = {name: m["backend"] for name, m in params["models"].items()}
            asked = [
                next((n for n, m in models.items() if m["backend"] == backend.get(x)), None) for x in rob["models"]
            ]
            rob["models"] = [n for n in dict.fromkeys(asked) if n is not None]
            if not rob["models"]:
                out[b]["robustness"] = None
    mt = out["meetingtom"]
    prompting = [m for m in mt["methods"] if "__" not in m]
    mt["methods"] = prompting + [f"no_prompt__{a}" for a in mt["ablations"]]
    mt["tables"]["prompting_models"] = ["prior-1"]
    out["moca"]["tables"]["human"] = None
    return out


def measure(scale: str, root: Path, repeat: int) -> dict:
    work = root / scale / "repo"
    work.mkdir(parents=True)
    repo_copy(work)
    link_shared(work)
    env = pipeline_env(work)  # the copy's own package, not the one the venv has installed
    if scale == "paper":
        params = yaml.safe_load((work / "params.yaml").read_text())
        (work / "params.yaml").write_text(yaml.safe_dump(paper_params(params), sort_keys=False))
        timed(["snakemake", "-n", "--quiet", "--cores", "1"], work, env)  # writes its dvc.yaml
    git_snapshot(work, env)
    _, dry = timed(["snakemake", "-n", "--cores", "2"], work, env)
    jobs = next((int(line.split()[1]) for line in dry.splitlines() if line.startswith("total")), 0)
    cold, _ = timed(["snakemake", "--cores", "2"], work, env)
    smk_version = median_time(["snakemake", "--version"], work, env, repeat)
    smk_noop = median_time(["snakemake", "-n", "--cores", "2"], work, env, repeat)
    dvc_version = median_time(["dvc", "--version"], work, env, repeat)
    dvc_status = median_time(["dvc", "status"], work, env, repeat)
    commit, _ = timed(["socialbench", "commit", "--repo", "."], work, env)
    stages = len(yaml.safe_load((work / "dvc.yaml").read_text())["stages"])
    return {
        "scale": scale,
        "models": len(yaml.safe_load((work / "params.yaml").read_text())["models"]),
        "jobs": jobs,
        "stages": stages,
        "cold_s": cold,
        "smk_version_s": smk_version,
        "smk_noop_s": smk_noop,
        "dvc_version_s": dvc_version,
        "dvc_status_s": dvc_status,
        "dvc_commit_s": commit,
        "lock_kb": (work / "dvc.lock").stat().st_size / 1024,
    }


def markdown(rows: list[dict]) -> str:
    lines = [
        "| scale | models | Snakemake jobs | DVC stages | cold `snakemake --cores 2` | no-op `snakemake -n` "
        "(x `--version`) | no-op `dvc status` (x `dvc --version`) | closing `dvc commit` | dvc.lock |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scale']} | {r['models']} | {r['jobs']} | {r['stages']} | {r['cold_s']:.0f} s "
            f"| {r['smk_noop_s']:.2f} s ({r['smk_noop_s'] / r['smk_version_s']:.1f}x of {r['smk_version_s']:.2f} s) "
            f"| {r['dvc_status_s']:.2f} s ({r['dvc_status_s'] / r['dvc_version_s']:.1f}x of {r['dvc_version_s']:.2f}"
            " s) "
            f"| {r['dvc_commit_s']:.1f} s | {r['lock_kb']:.0f} KB |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="demo,paper")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown", type=Path, help="replace the marked section of this file with the table")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        for scale in args.scales.split(","):
            rows.append(measure(scale, Path(tmp), args.repeat))
            print(json.dumps(rows[-1]), flush=True)
    table = markdown(rows)
    print(table)
    if args.markdown:
        replace_marked(args.markdown, MARK_BEGIN, MARK_END, table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
