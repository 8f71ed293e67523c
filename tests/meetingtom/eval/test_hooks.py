"""MeetingToM's scoring hooks (src/socialbench/meetingtom/eval/hooks.py): the scorer and its outcomes."""

from socialbench.core.benchmarks import get_benchmark
from socialbench.meetingtom.eval.scoring import score
from tests.meetingtom.eval.test_scoring import inst, pred

BENCH = get_benchmark("meetingtom")
GOLD = [inst(0), inst(1, answer="B")]
PREDS = [pred(0, "A"), pred(1, "A")]


def test_the_hook_scores_as_the_scorer_does():
    assert BENCH.eval.score(GOLD, PREDS, source="p.jsonl") == score(GOLD, PREDS, source="p.jsonl")


def test_outcomes_say_which_instance_is_correct():
    _, rows = BENCH.eval.score_with_outcomes(GOLD, PREDS, source="p.jsonl")
    assert [(r["id"], r["correct"]) for r in rows] == [("i0", True), ("i1", False)]


def test_the_scores_with_the_outcomes_are_the_scorers():
    scores, _ = BENCH.eval.score_with_outcomes(GOLD, PREDS, source="p.jsonl")
    assert scores == score(GOLD, PREDS, source="p.jsonl")
