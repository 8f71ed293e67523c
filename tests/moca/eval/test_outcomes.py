"""MoCA's per-instance outcomes (socialbench.moca.eval.outcomes): each instance's row counts its fields
as the scorer does, a failed or missing record is no answer, and the answer-format flags come from the
record's ``format``."""

from socialbench.core.benchmarks import get_benchmark
from socialbench.moca.eval.outcomes import FORMAT_FLAGS, format_flags, resolved, rows_of
from socialbench.moca.eval.scoring import matched
from tests.moca.results.paper_runs import answers, make_instances

BENCH = get_benchmark("moca")


def rows(instances, records):
    labels, mechanisms = BENCH.taxonomy.as_sets()
    return rows_of(matched(instances, records, labels, mechanisms))


def test_the_rows_follow_the_instances_order_with_their_scenario_as_group():
    inst = make_instances(2)
    out = rows(inst, list(reversed(answers(inst, "a", "direct", lambda k, f: True))))
    assert [(r["id"], r["group"]) for r in out] == [(i["id"], i["scenario"]) for i in inst]


def test_the_rows_count_each_field_as_the_score_does():
    inst = make_instances(10)
    recs = answers(inst, "a", "direct", lambda k, f: k % 2 == 0 or f == "subject")
    out = rows(inst, recs)
    scores = BENCH.eval.score(inst, recs, source="p")
    for field in ("label", "subject", "target", "mechanism"):
        right = sum(r["correct"][field] for r in out if r["group"] == "intent")
        assert 100 * right / 10 == scores["intent"][field]


def test_a_failed_record_is_no_answer_invalid_and_an_answer_error():
    inst = make_instances(1)
    recs = answers(inst, "a", "direct", lambda k, f: True)
    recs[0] = {**recs[0], "error": "answer truncated at max_tokens"}  # its fields are gold, but it failed
    row = rows(inst, recs)[0]
    assert not any(row["correct"].values()) and row["invalid"] and row["answer"] is None
    assert row["format"]["answer_errors"]


def test_an_instance_without_a_record_is_no_answer():
    inst = make_instances(1, scenarios=("intent",))
    row = rows(inst, [])[0]
    assert row["invalid"] and row["answer"] is None and row["format"]["answer_errors"]


def test_the_resolved_answer_is_the_four_fields_in_subject_target_mechanism_label_order():
    rec = {"subject": "s", "target": "t", "mechanism": "m", "label": "l", "error": None}
    assert resolved(rec) == ["s", "t", "m", "l"]


def test_the_format_flags_come_from_the_records_format():
    rec = {"format": {"repairs": ["retry", "code_fence"], "ignored_keys": ["x"], "last_tuple_kept": "checker"}}
    flags = format_flags(rec)
    assert set(flags) == set(FORMAT_FLAGS)
    assert [k for k in FORMAT_FLAGS if flags[k]] == [
        "repaired",
        "retry",
        "code_fence",
        "ignored_keys",
        "last_tuple_kept",
        "checker_unparsable",
    ]
