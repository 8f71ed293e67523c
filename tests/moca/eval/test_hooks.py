"""MoCA's scoring hooks (src/socialbench/moca/eval/hooks.py): the scorer and outcomes with the benchmark's
taxonomy, files named in errors."""

import json

import pytest

from socialbench.core.benchmarks import get_benchmark
from socialbench.core.errors import DataError
from socialbench.moca.eval.scoring import score
from tests.conftest import make_instance

BENCH = get_benchmark("moca")
GOLD = [make_instance("a"), make_instance("b", scenario="stance")]
PREDS = [
    {
        "id": "a",
        "subject": "the speaker",
        "target": "the player",
        "mechanism": "expressive aggression",
        "label": "mock",
    },
    {"id": "b", "subject": "the coach", "target": "the player", "mechanism": "x", "label": "dismissive"},
]


def test_the_hook_scores_as_the_scorer_does_with_the_benchmarks_taxonomy():
    expected = score(GOLD, PREDS, *BENCH.taxonomy.as_sets(), source="p.jsonl", instances_source="instances")
    assert BENCH.eval.score(GOLD, PREDS, source="p.jsonl") == expected


def test_outcomes_are_one_row_per_instance_grouped_by_scenario():
    assert [(r["id"], r["group"]) for r in BENCH.eval.score_with_outcomes(GOLD, PREDS, source="p.jsonl")[1]] == [
        ("a", "intent"),
        ("b", "stance"),
    ]


def test_a_score_file_reads_back_and_a_broken_one_is_named():
    data = json.dumps(BENCH.eval.score(GOLD, PREDS, source="p.jsonl")).encode()
    assert set(BENCH.eval.parse_scores(data, "s.json")) == {"intent", "stance"}
    with pytest.raises(DataError, match="s.json"):
        BENCH.eval.parse_scores(b"{", "s.json")


def test_the_scores_with_the_outcomes_come_from_one_matching_pass_and_equal_the_scorers(monkeypatch):
    import socialbench.moca.eval.hooks as hooks

    calls = []
    real = hooks.matched
    monkeypatch.setattr(hooks, "matched", lambda *a, **k: calls.append(1) or real(*a, **k))
    scores, _ = BENCH.eval.score_with_outcomes(GOLD, PREDS, source="p.jsonl")
    assert calls == [1]
    assert scores == BENCH.eval.score(GOLD, PREDS, source="p.jsonl")
