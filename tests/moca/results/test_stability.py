"""MoCA's answer-stability table (src/socialbench/moca/results/stability.py) on order runs made by the
real direct method from two scripted test doubles: one answers by position (the first slot and the
first listed option, whatever they show), one by content (the same candidates and classes, wherever
they are shown). Neither is a model."""

from __future__ import annotations

import json

import pytest

from socialbench.core.backend import ModelSpec, Response
from socialbench.core.benchmarks import Exchange, get_benchmark
from socialbench.core.errors import DataError
from socialbench.core.run_name import RunName
from socialbench.results.tables import rendered
from tests.conftest import make_instance
from tests.helpers.outcomes import run_summary
from tests.moca.results.paper_runs import read_csv

BENCH = get_benchmark("moca")
SPEC = ModelSpec(name="double", backend="scripted")
SEED = 11
K = 3
ROBUSTNESS = {"orders": K, "models": ["position", "content"], "methods": ["direct"]}


#: The demo instances' gold classes per scenario (tests.conftest.make_instance).
GOLD = {"intent": ("expressive aggression", "mock"), "stance": ("dominant detachment", "dismissive")}


def by_content(request) -> dict[str, str]:
    """The right candidates (by their text) and classes, wherever the request shows them."""
    mechanism, label = GOLD[request.task["scenario"]]
    answer = {"mechanism": mechanism, "label": label}
    for c in request.task["choices"]:
        want = {"subject": "the speaker", "target": "the player"}.get(c["field"])
        if want:
            answer[c["field"]] = next(o["value"] for o in c["options"] if o["text"] == want)
    return answer


def position_double(request) -> str:
    """TEST DOUBLE: answers the subject by position (the first slot, whoever it shows), the rest by content."""
    return json.dumps({**by_content(request), "subject": "subject0"})


def content_double(request) -> str:
    """TEST DOUBLE: answers by content only: the same answer under every order."""
    return json.dumps(by_content(request))


@pytest.fixture
def instances(image_file):
    media = [str(image_file)]
    return [make_instance(f"{s}-{i}", scenario=s, media=media) for s in ("intent", "stance") for i in range(8)]


def records(double, insts, run, robustness=ROBUSTNESS):
    section = {"methods": ["direct"], "answer": {}, "robustness": robustness}
    method = BENCH.method(run, SPEC, SEED, BENCH.method_settings(section, run))
    out = []
    for inst in insts:
        (req,) = method.step(inst, [])
        final = method.step(inst, [[Exchange(req, Response(text=double(req)), "k")]])
        out.append(BENCH.prediction_record(inst, final, model="m", method=run))
    return out


def predictions(insts, robustness=ROBUSTNESS):
    """Each order run's summary (``run_summary``), as the tables stage gives them."""
    out = {}
    for model, double in (("position", position_double), ("content", content_double)):
        for k in range(int(robustness["orders"])):
            run = str(RunName("direct", None, k))
            out[(model, run)] = run_summary(
                BENCH, insts, records(double, insts, run, robustness), source=f"{model}/{run}.jsonl"
            )
    return out


def params(robustness=ROBUSTNESS):
    return {"seed": SEED, "models": {}, "moca": {"methods": ["direct"], "robustness": robustness}}


def all_rows(files):
    """{(model, run): {metric: value}} of the all-scenarios cells of the long CSV."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for r in read_csv(files["stability.csv"]):
        if r["scenario"] == "all":
            assert r["n"] == "16"
            out.setdefault((r["model"], r["run"]), {})[r["metric"]] = r["value"]
    return out


def test_an_order_run_answers_are_read_with_the_slots_it_showed_and_record_the_order(instances):
    recs = records(position_double, instances, "direct__order1")
    assert recs[0]["order"] == {"index": 1, "shown": 1, "distinct": 4}
    assert recs[0]["subject"] == recs[0]["slots"]["subject"]["subject0"]
    assert "order" not in records(position_double, instances, "direct")[0]  # order 0's records as they were


def test_a_content_bound_answer_is_as_right_under_every_order_as_under_the_papers(instances):
    files = stability_tables({}, params(), instances, predictions(instances))
    row = all_rows(files)[("content", "direct")]
    assert float(row["holis_order_0"]) == float(row["holis_min"]) == float(row["circular_holis"]) == 100
    assert float(row["agreement"]) == 100
    assert float(row["gap"]) == 0


def test_a_position_bound_answer_loses_its_order_0_accuracy_to_the_circular_count(instances):
    files = stability_tables({}, params(), instances, predictions(instances))
    row = all_rows(files)[("position", "direct")]
    # right where the paper's draw put the gold subject in slot 0; never in slot 0 under all 3 rotations
    order0 = sum(r["subject"] == r["gold"]["subject"] for r in records(position_double, instances, "direct"))
    assert float(row["holis_order_0"]) == 100 * order0 / 16 > 0
    assert float(row["circular_subject"]) == float(row["circular_holis"]) == 0
    assert float(row["circular_target"]) == float(row["circular_mechanism"]) == 100
    assert float(row["gap"]) == float(row["holis_order_0"])
    assert float(row["agreement"]) == 0  # a different candidate in slot 0 under each order
    md = files["stability.md"]
    assert "### All scenarios" in md and "### intent" in md
    assert "no number here is from the paper" in md


def test_the_csv_names_each_lines_scenario_and_metric_once(instances):
    rows = read_csv(stability_tables({}, params(), instances, predictions(instances))["stability.csv"])
    assert list(rows[0]) == ["scenario", "model", "run", "metric", "value", "ci_low", "ci_high", "n"]
    keys = [(r["scenario"], r["model"], r["run"], r["metric"]) for r in rows]
    assert len(keys) == len(set(keys)) and {r["scenario"] for r in rows} == {"all"} | {i["scenario"] for i in instances}


def test_the_table_is_the_same_bytes_for_the_same_predictions_and_seed(instances):
    preds = predictions(instances)
    assert stability_tables({}, params(), instances, preds) == stability_tables({}, params(), instances, preds)


def test_items_with_fewer_distinct_orders_than_asked_use_their_distinct_ones_and_the_table_says_so(image_file):
    two = [
        make_instance(
            f"intent-{i}",
            media=[str(image_file)],
            subject_options=["the speaker", "the coach"],
            target_options=["the player", "the crowd"],
        )
        for i in range(4)
    ]
    robustness = {**ROBUSTNESS, "orders": 3}
    recs = records(position_double, two, "direct__order2", robustness)
    assert recs[0]["order"] == {"index": 2, "shown": 0, "distinct": 2}
    md = stability_tables({}, params(robustness), two, predictions(two, robustness))["stability.md"]
    assert "4 instance(s) have fewer than K = 3 distinct orders" in md


def test_without_robustness_the_table_says_there_are_no_order_runs(instances):
    files = stability_tables({}, {"seed": 1, "models": {}, "moca": {"robustness": None}}, instances, {})
    assert set(files) == {"stability.md", "stability.csv", "stability.tex"}
    assert "params moca.robustness is null: no order runs." in files["stability.md"]


def test_an_order_run_missing_beside_its_order_0_is_an_error_naming_it(instances):
    preds = predictions(instances)
    del preds[("content", "direct__order2")]
    with pytest.raises(DataError, match=r"content/direct__order2: no predictions of order 2 of content/direct"):
        stability_tables({}, params(), instances, preds)


def stability_tables(*args):
    """The benchmark's stability files as the tables stage writes them (``results.tables.rendered``)."""
    return rendered(BENCH.results.stability_tables(*args))
