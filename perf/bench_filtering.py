#!/usr/bin/env python3
"""MoCA raw-source filtering wall times on the shared annotation files (a benchmark, not a test).

The pool is every shared MoCA source file together: MUStARD (690), MIntRec train + dev (1,779),
MMSD2.0 valid (2,410), MemeCap test (559): 5,438 candidates, media absent (``missing_media: keep``).
Each job is timed ``--repeat`` times (median) against a reference measured in the same run:

* reference: ``json.loads`` / ``csv`` parsing of the same files, keeping nothing (the least any
  reader of them must do);
* read: :func:`socialbench.moca.dataset.sources.read_source` for the four sources (normalised, validated with
  the pandera candidate schema);
* preprocess: :func:`socialbench.moca.dataset.preprocess.preprocess` (text cleaning with ftfy, media checks,
  MinHash LSH near-duplicates with exact Jaccard confirmation, flags);
* unimodal: :func:`socialbench.moca.dataset.unimodal.unimodal_filter`;
* naive dedup (once): every pair's exact Jaccard of the same shingle sets, the O(n^2) baseline the
  LSH replaces; its duplicate pairs are compared with the LSH's to show none is missed.

Usage: .venv/bin/python perf/bench_filtering.py [--shared ../shared/data] [--repeat 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from socialbench.moca.dataset.preprocess import (  # noqa: E402
    PreprocessParams,
    dedup_key,
    find_duplicates,
    jaccard,
    preprocess,
    shingles,
    signature_text,
)
from socialbench.moca.dataset.sources import SourceOptions, read_source  # noqa: E402
from socialbench.moca.dataset.unimodal import UnimodalParams, unimodal_filter  # noqa: E402

SOURCES = (
    ("mustard", "mustard", None),
    ("mintrec", "mintrec", ["train", "dev"]),
    ("mmsd2", "mmsd2", ["valid"]),
    ("memecap", "memecap", ["test"]),
)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def parse_only(shared: Path) -> None:
    for f in ("mustard/sarcasm_data.json", "mmsd2/valid.json", "memecap/memes-test.json"):
        json.loads((shared / f).read_text(encoding="utf-8"))
    for f in ("mintrec/train.tsv", "mintrec/dev.tsv"):
        list(csv.reader(io.StringIO((shared / f).read_text(encoding="utf-8")), delimiter="\t"))


def read_pool(shared: Path) -> list[dict]:
    pool = []
    for name, folder, splits in SOURCES:
        pool += read_source(name, shared / folder, SourceOptions(splits=tuple(splits) if splits else None))
    return pool


def naive_pairs(texts: list[str], params: PreprocessParams) -> set[tuple[int, int]]:
    sets = [shingles(dedup_key(t), params.shingle_chars) for t in texts]
    return {
        (i, j)
        for j in range(len(sets))
        for i in range(j)
        if jaccard(sets[i], sets[j]) >= params.near_duplicate_threshold
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data", help="shared data folder")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None, help="also write the measurements here")
    args = ap.parse_args()
    if not args.shared.is_dir():
        sys.exit(f"error: {args.shared}: not a folder (the shared annotation files are needed)")

    pre_params, uni_params = PreprocessParams(missing_media="keep"), UnimodalParams()
    ref, read, pre, uni = [], [], [], []
    counts: dict[str, int] = {}
    for _ in range(args.repeat):
        ref.append(timed(lambda: parse_only(args.shared))[0])
        t, pool = timed(lambda: read_pool(args.shared))
        read.append(t)
        t, result = timed(lambda: preprocess(pool, pre_params))
        pre.append(t)
        t, filtered = timed(lambda: unimodal_filter(result.kept, uni_params))
        uni.append(t)
        counts = {"pool": len(pool), "after_preprocess": len(result.kept), "after_unimodal": len(filtered.kept)}

    # The O(n^2) baseline, once; the LSH must find every pair it finds (among the texts preprocess
    # compares: the cleaned texts of the candidates that reach deduplication).
    texts = [signature_text(r) for r in result.kept] + [
        signature_text(e["record"]) for e in result.removed if e["reason"] in ("exact_duplicate", "near_duplicate")
    ]
    t_naive, pairs = timed(lambda: naive_pairs(texts, pre_params))
    t_lsh, dups = timed(lambda: find_duplicates(texts, [None] * len(texts), pre_params))
    dup_idx = {d.index for d in dups}
    missed = [j for i, j in pairs if j not in dup_idx and i not in dup_idx]

    med = {
        k: statistics.median(v) for k, v in (("reference", ref), ("read", read), ("preprocess", pre), ("unimodal", uni))
    }
    total = med["read"] + med["preprocess"] + med["unimodal"]
    out = {
        "counts": counts,
        "median_s": med,
        "total_s": total,
        "total_over_reference": total / med["reference"],
        "naive_dedup_s": t_naive,
        "lsh_dedup_s": t_lsh,
        "naive_over_lsh": t_naive / t_lsh,
        "naive_pairs": len(pairs),
        "pairs_missed_by_lsh": len(missed),
        "repeat": args.repeat,
    }
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
