#!/usr/bin/env python3
"""MeetingToM data wall times on the shared AMI annotations (a benchmark, not a test).

Three jobs, each timed ``--repeat`` times (median), against a reference measured in the same run:

* reference: ``xml.etree.ElementTree.parse`` of every XML file the parser reads (words, segments,
  dialogue acts, adjacency pairs, you-usages, decisions, topics, roles, ontologies, meetings.xml),
  keeping nothing: the least any reader of these files must do;
* parse: :func:`socialbench.meetingtom.dataset.ami.nxt.parse_corpus` (every layer of every meeting, hrefs
  resolved, problems collected);
* mine: :func:`socialbench.meetingtom.dataset.ami.mining.mine_corpus` on the parsed corpus (all three tasks);
* you events: :func:`socialbench.meetingtom.dataset.ami.you_events.you_events` on the parsed corpus.

Usage: .venv/bin/python perf/bench_mining.py [--ami ../shared/data/ami] [--repeat 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from socialbench.meetingtom.dataset.ami.mining import mine_corpus  # noqa: E402
from socialbench.meetingtom.dataset.ami.nxt import ONTOLOGY_FILES, parse_corpus  # noqa: E402
from socialbench.meetingtom.dataset.ami.you_events import you_events  # noqa: E402

READ_DIRS = ("words", "segments", "dialogueActs", "youUsages", "decision/manual", "topics", "participantRoles")


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def parse_only(files: list[Path]) -> None:
    for f in files:
        ET.parse(f)  # each tree dropped at once: holding them all would make the collector scan them


def files_read(ami: Path) -> list[Path]:
    files = [f for d in READ_DIRS for f in sorted((ami / d).glob("*.xml"))]
    return files + [ami / "ontologies" / n for n in ONTOLOGY_FILES] + [ami / "corpusResources" / "meetings.xml"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ami", type=Path, default=REPO.parent / "shared" / "data" / "ami", help="AMI annotations folder")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None, help="also write the measurements here")
    args = ap.parse_args()
    if not args.ami.is_dir():
        sys.exit(f"error: {args.ami}: not a folder (the shared AMI annotations are needed)")

    files = files_read(args.ami)
    for f in files:  # warm the page cache so every job reads from memory
        f.read_bytes()
    ref, parse, mine, you = [], [], [], []
    counts: dict[str, int] = {}
    for _ in range(args.repeat):
        ref.append(timed(lambda: parse_only(files))[0])
        t, corpus = timed(lambda: parse_corpus(args.ami))
        parse.append(t)
        t, result = timed(lambda c=corpus: mine_corpus(c.meetings))
        mine.append(t)
        t, events = timed(lambda c=corpus: you_events(c.meetings))
        you.append(t)
        counts = {
            "meetings": len(corpus.meetings),
            "xml_files": len(files),
            "kept": len(result.accepted),
            "rejected": len(result.rejected),
            "you_events": len(events),
        }
        del corpus, result, events

    med = {
        k: statistics.median(v) for k, v in (("reference", ref), ("parse", parse), ("mine", mine), ("you_events", you))
    }
    total = med["parse"] + med["mine"]
    print(
        f"AMI folder: {args.ami} ({counts['meetings']} meetings, {counts['xml_files']} XML files); median of"
        f" {args.repeat}"
    )
    print(f"kept candidates {counts['kept']}, rejected {counts['rejected']}, you events {counts['you_events']}\n")
    print("| job | wall (s) | ratio to reference |")
    print("|---|---:|---:|")
    print(f"| reference: ElementTree.parse of every file | {med['reference']:.3f} | 1.00x |")
    for key, label in (
        ("parse", "parse_corpus (all layers)"),
        ("mine", "mine_corpus (3 tasks)"),
        ("you_events", "you_events"),
    ):
        print(f"| {label} | {med[key]:.3f} | {med[key] / med['reference']:.2f}x |")
    print(f"| parse + mine | {total:.3f} | {total / med['reference']:.2f}x |")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "median_s": med,
                    "runs_s": {"reference": ref, "parse": parse, "mine": mine, "you_events": you},
                    "counts": counts,
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
