"""Bootstrap-interval wall time on demo-sized cells (a benchmark, not a test).

Cells: ``--cells`` (default 15: 5 models x 1 method x 3 scenarios) of ``--n`` instances (default 24,
the demo's test instances per scenario), random per-instance correctness with an invalid column.
Timed, median of ``--repeat`` runs, each against references measured in the same run:

* ours: ``socialbench.results.stats.bootstrap_cells`` -- percentile intervals of all 9 metrics of every cell
  (``--resamples`` resamples, default 2000);
* reference (point): the point metrics only, ``socialbench.moca.eval.scoring.score_scenario`` on the same
  cells (the work the pipeline already does); the printed ratio is ours / this;
* naive: ``scipy.stats.bootstrap(method="percentile")`` once per cell and metric (vectorised
  statistic; ratio metrics as ratio of sums, paired data), i.e. the obvious implementation.

Target: all cells' intervals well under a second.

Usage: python perf/bench_stats.py [--cells 15] [--n 24] [--resamples 2000] [--repeat 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np

from socialbench.moca.eval.scoring import FIELDS, score_scenario
from socialbench.results import stats


def timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def make_cells(n_cells: int, n: int, seed: int) -> dict[tuple[str, str, str], np.ndarray]:
    rng = np.random.default_rng(seed)
    scenarios = ("affection", "intent", "stance")
    cells = {}
    for k in range(n_cells):
        key = (f"model{k // len(scenarios)}", "direct", scenarios[k % len(scenarios)])
        m = rng.random((n, 5)) < rng.uniform(0.3, 0.8)
        m[:, 4] = rng.random(n) < 0.1  # invalid
        cells[key] = m
    return cells


def point_only(cells: dict) -> dict:
    out = {}
    for key, m in cells.items():
        rows = [({k: bool(m[i, j]) for j, k in enumerate(FIELDS)}, bool(m[i, 4])) for i in range(m.shape[0])]
        out[key] = score_scenario(rows)
    return out


def naive_scipy(cells: dict, resamples: int, seed: int) -> dict:
    from scipy import stats as sps

    rng = np.random.default_rng(seed)
    out = {}
    for key, m in cells.items():
        x = m.astype(float)
        label, subj, tgt, mech, inv = (x[:, j] for j in range(5))
        dyad = subj * tgt
        holis = dyad * label * mech
        means = {
            "label": label,
            "subject": subj,
            "target": tgt,
            "mechanism": mech,
            "dyad": dyad,
            "holis": holis,
            "invalid_rate": inv,
        }
        ratios = {"faith": (label * mech, label), "c_sem_dyad": (holis, dyad)}
        res = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, v in means.items():
                ci = sps.bootstrap(
                    (v,),
                    lambda a, axis: 100 * a.mean(axis=axis),
                    n_resamples=resamples,
                    method="percentile",
                    random_state=rng,
                ).confidence_interval
                res[name] = (ci.low, ci.high)
            for name, (num, den) in ratios.items():
                ci = sps.bootstrap(
                    (num, den),
                    lambda a, b, axis: 100 * a.sum(axis=axis) / b.sum(axis=axis),
                    paired=True,
                    n_resamples=resamples,
                    method="percentile",
                    random_state=rng,
                ).confidence_interval
                res[name] = (ci.low, ci.high)
        out[key] = res
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=15)
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--resamples", type=int, default=stats.DEFAULT_RESAMPLES)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--no-naive", action="store_true", help="skip the scipy.stats.bootstrap row")
    ap.add_argument("--json", help="write the timings here")
    args = ap.parse_args()

    cells = make_cells(args.cells, args.n, args.seed)
    ours = timed(lambda: stats.bootstrap_cells(cells, n_resamples=args.resamples, seed=args.seed), args.repeat)
    point = timed(lambda: point_only(cells), args.repeat)
    naive = (
        None
        if args.no_naive
        else timed(lambda: naive_scipy(cells, args.resamples, args.seed), max(1, args.repeat // 2))
    )

    print(f"{args.cells} cells x {args.n} instances, {args.resamples} resamples, median of {args.repeat}")
    print(f"  ours  (bootstrap_cells, all 9 metrics): {ours * 1e3:9.2f} ms")
    print(f"  point (score_scenario, metrics only):   {point * 1e3:9.2f} ms")
    if naive is not None:
        print(f"  naive (scipy.stats.bootstrap per metric): {naive * 1e3:7.2f} ms")
    print(
        f"ratio ours / point-only: {ours / point:.1f}x"
        + ("" if naive is None else f"; naive / ours: {naive / ours:.1f}x")
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "cells": args.cells,
                    "n": args.n,
                    "resamples": args.resamples,
                    "repeat": args.repeat,
                    "ours_s": ours,
                    "point_s": point,
                    "naive_s": naive,
                    "ratio_ours_point": ours / point,
                },
                fh,
                indent=2,
            )


if __name__ == "__main__":
    main()
