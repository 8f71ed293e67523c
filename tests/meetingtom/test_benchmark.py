"""MeetingToM as a registered benchmark: its methods, the baselines answering its requests through
the real runner, and the prediction records and scores that come out."""

import json

import pytest

from socialbench.backends.base import ModelSpec
from socialbench.benchmark import available_benchmarks, get_benchmark
from socialbench.cache import RequestCache
from socialbench.meetingtom.scoring import score
from socialbench.runner import run_method
from tests.meetingtom.test_instances import CAND, EVENT, WORDS


@pytest.fixture
def bench():
    return get_benchmark("meetingtom")


def instances(n=6, split="test"):
    from socialbench.meetingtom.instances import build_task21

    out = []
    for k in range(n):
        cand = {**CAND, "anchor": f"IS1001a.B.you.{k}", "id": f"you:IS1001a.B.you.{k}"}
        out.append(build_task21(cand, {**EVENT, "addressee": "ACD"[k % 3]}, "ABCD", WORDS, None, source="ami", split=split,
                                modality="utterances", seed=7))  # fmt: skip
    return out


def run(bench, backend, insts, tmp_path, options=None, dev=None):
    spec = ModelSpec(name=backend, backend=backend, category="baseline", options=options or {})
    cache = RequestCache(tmp_path / "cache.sqlite")
    try:
        return run_method(bench, bench.method("direct", spec, 7), insts, spec=spec, cache=cache, seed=7,
                          dev_instances=dev, progress=False)  # fmt: skip
    finally:
        cache.close()


def test_meetingtom_is_a_registered_benchmark_with_its_direct_method(bench):
    assert "meetingtom" in available_benchmarks()
    assert bench.method_names() == ["direct"]
    assert bench.provenance("direct")["prompt_template_sha256"]


def test_the_chance_baseline_answers_every_request_with_an_option(bench, tmp_path):
    insts = instances()
    records, _, stats = run(bench, "random", insts, tmp_path)
    assert stats.errors == 0
    for inst, rec in zip(sorted(insts, key=lambda i: i["id"]), records):
        assert rec["error"] is None and rec["answer"] in {o["label"] for o in inst["options"]}


def test_the_prior_baseline_answers_the_dev_splits_most_frequent_letter(bench, tmp_path):
    dev = instances(5, "dev")
    majority = max("ABC", key=lambda x: sum(i["answer"] == x for i in dev))
    records, _, _ = run(bench, "prior", instances(), tmp_path, dev=dev)
    assert {r["answer"] for r in records} == {majority}


def test_the_minilm_baseline_picks_the_participant_whose_words_match_the_question(bench, tmp_path):
    # D answers the question with its own words; A and C say nothing
    inst = instances(1)[0]
    records, _, stats = run(bench, "minilm", [inst], tmp_path)
    assert stats.errors == 0 and records[0]["participant"] == "D"


def test_an_invalid_answer_is_recorded_and_scored_wrong(bench, tmp_path):
    insts = instances(2)
    records, traces, _ = run(bench, "scripted", insts, tmp_path, {"default": "I think it is B."})
    assert all(r["answer"] is None and r["error"].startswith("unparsable") for r in records)
    assert traces[0]["calls"][0]["text"] == "I think it is B."
    s = score(insts, records, source="p")["task2_1/ami"]
    assert (s["correct"], s["invalid"]) == (0, 2)


def test_a_right_answer_scores_and_the_record_names_the_participant(bench, tmp_path):
    inst = instances(1)[0]
    records, _, _ = run(bench, "scripted", [inst], tmp_path, {"default": json.dumps({"answer": inst["answer"]})})
    assert records[0]["participant"] == inst["addressee"] and records[0]["source"] == "ami" and records[0]["task"] == "task2_1"
    assert score([inst], records, source="p")["task2_1/ami"]["accuracy"] == 100.0
