"""Peak memory of ``socialbench tables --benchmark moca`` against the number of runs (issue 32; a
benchmark, not a test).

The tables stage reads every run's outcomes (written by the score stage); the question is whether its
peak RSS grows with the runs. This builds, from a finished demo run (``--from``: a checkout whose ``results/`` and
``data/processed/moca/test.jsonl`` a demo run made), MoCA at the paper's size (``--instances``, split
936/1,179/993 over affection/intent/stance as the paper's 3,108; each demo instance copied under new
ids) and ``--runs`` copies of one run's outcomes (``--template``, default ``random/direct``: its
predictions, ids renamed, scored once) under as many models (``synth01``, ...; the same score file), then runs
the tables command once per run count, in a child process, and reports its wall time and peak RSS
(``wait4``'s ``ru_maxrss``). ``--src`` runs another checkout's code (its ``src/``) to compare.

Usage: python perf/bench_tables_memory.py [--from DIR] [--runs 1,31] [--instances 3108]
       [--template random/direct] [--src SRC] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
#: The MoCA paper's test split per scenario (Table 1): 3,108 instances.
MOCA_SCENARIOS = {"affection": 936, "intent": 1179, "stance": 993}


def scaled_counts(total: int) -> dict[str, int]:
    """The paper's per-scenario counts scaled to ``total`` (the rest to the largest scenario)."""
    paper = sum(MOCA_SCENARIOS.values())
    counts = {s: n * total // paper for s, n in MOCA_SCENARIOS.items()}
    counts["intent"] += total - sum(counts.values())
    return counts


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, sort_keys=True) + "\n")


def build(src: Path, work: Path, total: int, template: str, max_runs: int) -> tuple[Path, Path]:
    """The scaled instances, ``max_runs`` runs' outcomes and score files, and a params file; returns
    (instances, params)."""
    sys.path.insert(0, str(REPO / "src"))
    from socialbench.core.benchmarks import get_benchmark

    demo = read_jsonl(src / "data/processed/moca/test.jsonl")
    by_scenario: dict[str, list[dict]] = {}
    for inst in demo:
        by_scenario.setdefault(inst["scenario"], []).append(inst)
    instances, origin = [], {}
    for s, n in scaled_counts(total).items():
        pool = by_scenario[s]
        for k in range(n):
            base = pool[k % len(pool)]
            iid = f"{base['id']}-x{k:05d}"
            instances.append({**base, "id": iid})
            origin[iid] = base["id"]
    inst_path = work / "data/processed/moca/test.jsonl"
    write_jsonl(inst_path, instances)

    model, method = template.split("/")
    recs = {r["id"]: r for r in read_jsonl(src / f"results/predictions/moca/{model}/{method}.jsonl")}
    params = yaml.safe_load((src / "params.yaml").read_text("utf-8"))
    entry = params["models"][model]
    names = [f"synth{i:02d}" for i in range(1, max_runs + 1)]
    params["models"] = {m: dict(entry) for m in names}
    params["moca"].update({"methods": [method], "robustness": None, "tables": {"human": None}})
    params["meetingtom"]["robustness"] = None  # it names the demo's models
    params_path = work / "params.yaml"
    params_path.write_text(yaml.safe_dump(params, sort_keys=False), "utf-8")

    one = [{**recs[origin[i["id"]]], "id": i["id"]} for i in instances]
    bench = get_benchmark("moca")
    scores = bench.score(instances, one, source="template")
    outcomes = bench.outcomes(instances, one, source="template")
    for m in names:
        write_jsonl(work / f"results/outcomes/moca/{m}/{method}.jsonl", outcomes)
        out = work / f"results/scores/moca/{m}/{method}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(scores, indent=2, sort_keys=True) + "\n", "utf-8")
    return inst_path, params_path


def measure(work: Path, code: Path, runs: int, method: str) -> dict:
    """One tables command over the first ``runs`` models: wall seconds and peak RSS (MB)."""
    scores = [f"results/scores/moca/synth{i:02d}/{method}.json" for i in range(1, runs + 1)]
    out = f"out{runs}"
    shutil.rmtree(work / out, ignore_errors=True)
    argv = [sys.executable, "-m", "socialbench.cli", "tables", "--benchmark", "moca", "--params", "params.yaml"]
    argv += ["--out-dir", f"{out}/tables", "--headline", f"{out}/metrics.json"]
    argv += ["--instances", "data/processed/moca/test.jsonl", "--outcomes-dir", "results/outcomes/moca", *scores]
    env = {**os.environ, "PYTHONPATH": str(code), "MLFLOW_DISABLE_TELEMETRY": "true"}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    output = proc.stdout.read().decode("utf-8", "replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"tables with {runs} run(s) failed:\n{output}")
    return {
        "runs": runs,
        "wall_s": round(wall, 1),
        "cpu_s": round(ru.ru_utime + ru.ru_stime, 1),
        "maxrss_mb": round(ru.ru_maxrss / 1024),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="src", type=Path, default=REPO, help="a checkout with a finished demo run")
    ap.add_argument("--runs", default="1,31", help="run counts, comma-separated")
    ap.add_argument("--instances", type=int, default=sum(MOCA_SCENARIOS.values()))
    ap.add_argument(
        "--template", default="random/direct", help="<model>/<run> of the demo whose predictions are copied"
    )
    ap.add_argument("--src", dest="code", type=Path, default=REPO / "src", help="the code to run (a src/ folder)")
    ap.add_argument("--keep", type=Path, help="build in this folder and keep it (default: a temporary one)")
    a = ap.parse_args()
    counts = sorted({int(x) for x in a.runs.split(",")})
    work = a.keep or Path(tempfile.mkdtemp(prefix="bench_tables_"))
    try:
        build(a.src.resolve(), work, a.instances, a.template, counts[-1])
        rows = [measure(work, a.code.resolve(), n, a.template.split("/")[1]) for n in counts]
    finally:
        if a.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"tables --benchmark moca, {a.instances} instances, code {a.code}:")
    print("| runs | wall | CPU | peak RSS |\n|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['runs']} | {r['wall_s']} s | {r['cpu_s']} s | {r['maxrss_mb']} MB |")
    if len(rows) > 1:
        grow = (rows[-1]["maxrss_mb"] - rows[0]["maxrss_mb"]) / (rows[-1]["runs"] - rows[0]["runs"])
        print(f"peak RSS grows {grow:.1f} MB a run")


if __name__ == "__main__":
    main()
