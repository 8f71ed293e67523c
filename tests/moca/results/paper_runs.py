"""What the tests of the paper's tables share: synthetic instances, prediction records right or wrong
by rule, and a run of ``MocaBenchmark.tables`` on them (scores from the real scorer)."""

from __future__ import annotations

import csv
import functools
import io

from socialbench.results.tables import rendered
from tests.conftest import make_instance
from tests.helpers.outcomes import run_summary
from tests.moca.conftest import ABLATIONS

SCENARIOS = ("intent", "stance")


@functools.lru_cache(maxsize=1)
def bench():
    from socialbench.core.benchmarks import get_benchmark

    return get_benchmark("moca")  # one taxonomy load for the module


def make_instances(n: int = 30, scenarios=SCENARIOS) -> list[dict]:
    return [make_instance(f"{s}-{i:03d}", scenario=s) for s in scenarios for i in range(n)]


def wrong(instance: dict, field: str) -> str:
    """A valid value of the field that is not the gold one."""
    labels, mechanisms = bench().taxonomy.as_sets()
    s = instance["scenario"]
    pool = {
        "label": labels[s],
        "mechanism": mechanisms[s],
        "subject": instance["subject_options"],
        "target": instance["target_options"],
    }[field]
    return next(v for v in pool if v != instance[field])


def answers(instances: list[dict], model: str, method: str, right) -> list[dict]:
    """Prediction records: field f of instance k is gold when right(k, f) (k counts within the scenario)."""
    out, seen = [], {}
    for inst in instances:
        k = seen[inst["scenario"]] = seen.get(inst["scenario"], -1) + 1
        rec = {"id": inst["id"], "model": model, "method": method, "scenario": inst["scenario"]}
        rec.update({f: inst[f] if right(k, f) else wrong(inst, f) for f in ("label", "subject", "target", "mechanism")})
        out.append(rec)
    return out


def run_tables(
    instances,
    runs: dict[tuple[str, str], list[dict]],
    models: dict,
    tables: dict | None = None,
    methods=("direct",),
    per_instance: bool = True,
    ablations=ABLATIONS,
):
    b = bench()
    scores = {k: b.eval.score(instances, recs, source=f"{k[0]}/{k[1]}.jsonl") for k, recs in runs.items()}
    params = {
        "seed": 7,
        "models": models,
        "moca": {"methods": list(methods), "ablations": ablations, "tables": {"resamples": 1000, **(tables or {})}},
    }
    summaries = (
        {k: run_summary(b, instances, recs, source=f"{k[0]}/{k[1]}.jsonl") for k, recs in runs.items()}
        if per_instance
        else None
    )
    files, _ = b.results.tables(scores, params, instances if per_instance else None, summaries)
    return rendered(files), scores


def bench_tables(*args):
    """``MocaBenchmark.tables`` with its files as the stage writes them (``results.tables.rendered``)."""
    files, headline = bench().results.tables(*args)
    return rendered(files), headline


def read_csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def md_row(md: str, name: str) -> list[str]:
    line = next(x for x in md.splitlines() if x.startswith("| ") and x.split(" | ")[1] == name)
    return [c.strip() for c in line.strip("| ").split(" | ")]


# Two backbones: "a" improves a lot with codar, "b" not at all; everything else fixed.
def codar_runs(instances):
    return {
        ("a", "direct"): answers(instances, "a", "direct", lambda k, f: f in ("subject", "target") and k < 12),
        ("a", "codar"): answers(instances, "a", "codar", lambda k, f: k < 24),
        ("b", "direct"): answers(instances, "b", "direct", lambda k, f: k % 2 == 0),
        ("b", "codar"): answers(instances, "b", "codar", lambda k, f: k % 2 == 0),
    }


MODELS = {"a": {"category": "open-weight"}, "b": {"category": "proprietary"}}
