"""MeetingToM's answer-stability table (src/socialbench/meetingtom/results/stability.py) on order runs
made by the real No Prompt method from two scripted test doubles: one answers by position (always
option 1, whatever it is), one by content (the option whose value it wants, wherever it is listed).
Neither is a model."""

from __future__ import annotations

import csv
import io
import json

import pytest

from socialbench.core.backend import ModelSpec, Response
from socialbench.core.benchmarks import Exchange, get_benchmark
from socialbench.core.run_name import RunName
from socialbench.meetingtom.eval.scoring import group_of
from socialbench.results.tables import rendered
from tests.helpers.outcomes import run_summary
from tests.meetingtom.eval.test_prompts import make

BENCH = get_benchmark("meetingtom")
SPEC = ModelSpec(name="double", backend="scripted")
K = 3
ROBUSTNESS = {"orders": K, "models": ["position", "content"], "methods": ["no_prompt"]}


@pytest.fixture(scope="module")
def instances():
    return [make(task, k=k) for task in ("task1", "task2_2") for k in range(1, 7)]


def gold_values(insts):
    return {i["id"]: i["gold"] for i in insts}


def position_double(request, gold) -> str:
    """TEST DOUBLE: always option 1."""
    return json.dumps({"answer": "1"})


def content_double(request, gold) -> str:
    """TEST DOUBLE: the option holding the value it wants (the gold one), wherever it is listed."""
    iid = request.request_id.split("/", 1)[0]
    (choice,) = request.task["choices"]
    return json.dumps({"answer": next(o["value"] for o in choice["options"] if o["key"] == gold[iid])})


def records(double, insts, run):
    section = {"methods": ["no_prompt"], "robustness": ROBUSTNESS}
    method = BENCH.method(run, SPEC, 7, BENCH.method_settings(section, run))
    gold = gold_values(insts)
    out = []
    for inst in insts:
        (req,) = method.step(inst, [])
        final = method.step(inst, [[Exchange(req, Response(text=double(req, gold)), "k")]])
        out.append(BENCH.prediction_record(inst, final, model="m", method=run))
    return out


def predictions(insts):
    """Each order run's summary (``run_summary``), as the tables stage gives them."""
    return {
        (model, str(RunName("no_prompt", None, k))): run_summary(
            BENCH, insts, records(double, insts, str(RunName("no_prompt", None, k))), source=f"{model}.jsonl"
        )
        for model, double in (("position", position_double), ("content", content_double))
        for k in range(K)
    }


PARAMS = {"seed": 7, "models": {}, "meetingtom": {"methods": ["no_prompt"], "robustness": ROBUSTNESS}}


def all_tasks(files):
    """{model: {metric: value}} of the all-tasks cells of the long CSV."""
    out: dict[str, dict[str, str]] = {}
    for r in csv.DictReader(io.StringIO(files["stability.csv"])):
        if (r["task"], r["source"]) == ("all", "all"):
            assert r["n"] == "12"
            out.setdefault(r["model"], {})[r["metric"]] = r["value"]
    return out


def test_an_order_runs_answer_is_mapped_back_to_the_instances_own_labels(instances):
    inst = instances[0]
    (rec,) = records(position_double, [inst], "no_prompt__order1")
    n = len(inst["options"])
    assert rec["order"] == {"index": 1, "shown": 1, "distinct": n, "answer_shown": "1"}
    # option 1 of order 1 is option 2 of the paper's list
    assert (rec["answer"], rec["value"]) == ("2", inst["options"][1]["value"])
    (plain,) = records(position_double, [inst], "no_prompt")
    assert "order" not in plain and plain["answer"] == "1"


def test_an_order_runs_request_shows_the_rotated_list_numbered_again(instances):
    inst = instances[0]
    method = BENCH.method("no_prompt__order2", SPEC, 7, {"order": 2})
    (req,) = method.step(inst, [])
    assert req.request_id == f"{inst['id']}/no_prompt__order2/answer"
    assert f"1. {inst['options'][2]['text']}" in req.messages[1].text()


def test_a_content_bound_model_is_stable_and_a_position_bound_one_is_not(instances):
    files = stability_tables({}, PARAMS, instances, predictions(instances))
    rows = all_tasks(files)
    assert float(rows["content"]["accuracy_order_0"]) == float(rows["content"]["circular_accuracy"]) == 100
    assert float(rows["content"]["agreement"]) == 100 and float(rows["content"]["gap"]) == 0
    assert float(rows["position"]["agreement"]) == 0  # option 1 is another option under each order
    assert float(rows["position"]["circular_accuracy"]) == 0
    order0 = sum(r["value"] == r["gold_value"] for r in records(position_double, instances, "no_prompt"))
    assert order0 > 0
    assert float(rows["position"]["accuracy_order_0"]) == round(100 * order0 / 12, 2)
    assert float(rows["position"]["gap"]) == float(rows["position"]["accuracy_order_0"])
    md = files["stability.md"]
    assert "### All tasks" in md and "Task 1: subject-level mental state" in md


def test_without_robustness_the_table_says_there_are_no_order_runs(instances):
    files = stability_tables({}, {"seed": 7, "models": {}, "meetingtom": {}}, instances, {})
    assert "params meetingtom.robustness is null: no order runs." in files["stability.md"]


def test_the_csv_names_each_lines_task_source_and_metric_once(instances):
    files = stability_tables({}, PARAMS, instances, predictions(instances))
    rows = list(csv.DictReader(io.StringIO(files["stability.csv"])))
    assert list(rows[0]) == ["task", "source", "model", "run", "metric", "value", "ci_low", "ci_high", "n"]
    keys = [(r["task"], r["source"], r["model"], r["run"], r["metric"]) for r in rows]
    assert len(keys) == len(set(keys))
    groups = {(r["task"], r["source"]) for r in rows}
    assert ("all", "all") in groups and {g for g in groups if g != ("all", "all")} == {
        tuple(group_of(i)) for i in instances
    }
    assert {f"accuracy_order_{k}" for k in range(K)} <= {r["metric"] for r in rows}


def stability_tables(*args):
    """The benchmark's stability files as the tables stage writes them (``results.tables.rendered``)."""
    return rendered(BENCH.results.stability_tables(*args))
