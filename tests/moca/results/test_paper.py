"""Everything the tables stage adds (socialbench.moca.results.paper): the intervals of every cell, the
notes under Tables 2-4, the human row."""

import json

import pytest

from socialbench.moca.eval.scoring import STATS
from tests.helpers.outcomes import run_summary
from tests.moca.results.paper_runs import (
    MODELS,
    SCENARIOS,
    answers,
    bench,
    codar_runs,
    make_instances,
    md_row,
    read_csv,
    run_tables,
)

pytestmark = pytest.mark.usefixtures("figures_drawn_not_rasterized")


def test_every_interval_point_equals_its_table_value_exactly():
    inst = make_instances()
    files, scores = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    for s in SCENARIOS:
        rows = read_csv(files[f"{s}.ci.csv"])
        assert len(rows) == 4 * 9
        for r in rows:
            want = scores[(r["model"], r["method"])][s][r["metric"]]
            assert (r["value"] == "" and want is None) or float(r["value"]) == want, r
            assert r["resamples"] == "1000" and r["n"] == "30"
            if want is not None and r["low"]:
                assert float(r["low"]) <= want <= float(r["high"])


def test_intervals_come_from_the_cells_own_seeded_bootstrap():
    from socialbench.results import stats

    inst = make_instances()
    runs = codar_runs(inst)
    files, _ = run_tables(inst, runs, MODELS, methods=("direct", "codar"))
    cell = run_summary(bench(), inst, runs[("b", "direct")]).cells["stance"]
    ci = stats.bootstrap_ci(cell, n_resamples=1000, seed=stats.cell_seed(7, "b", "direct", "stance"), defs=STATS)
    row = next(
        r
        for r in read_csv(files["stance.ci.csv"])
        if r["model"] == "b" and r["method"] == "direct" and r["metric"] == "holis"
    )
    assert (float(row["low"]), float(row["high"])) == (ci["holis"].low, ci["holis"].high)


def test_without_per_instance_data_the_tables_come_out_and_say_there_are_no_intervals_or_tests():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"), per_instance=False)
    assert md_row(files["intent.md"], "a + codar")[2] == "**80.00** (+80.00)"
    assert "No paired tests: the tables stage ran without --instances and --outcomes-dir" in files["intent.md"]
    assert "No intervals" in files["intent.ci.md"] and len(read_csv(files["intent.ci.csv"])) == 0


def test_no_human_model_is_said_under_each_table_with_the_params_entry_to_set():
    inst = make_instances()
    files, _ = run_tables(inst, codar_runs(inst), MODELS, methods=("direct", "codar"))
    assert (
        "Human row: none; name the model that holds human answers (backend file) in moca.tables.human."
        in files["intent.md"]
    )
    assert "No human rate: name the model that holds human answers in moca.tables.human." in files["table7.md"]


def test_the_human_row_comes_from_a_human_answers_file_through_the_file_backend_and_the_same_scorer(tmp_path):
    from PIL import Image

    from socialbench.core.backend import ModelSpec
    from socialbench.core.cache import RequestCache
    from socialbench.core.runner import run_method

    img = tmp_path / "img.png"
    Image.new("RGB", (8, 8), (10, 20, 30)).save(img)
    inst = [{**i, "media": [str(img)]} for i in make_instances(10)]
    # the annotators: right on everything but the label of every other instance; one instance left blank
    human = answers(inst, "human", "direct", lambda k, f: f != "label" or k % 2 == 0)
    human[3] = {"id": human[3]["id"], "label": None, "mechanism": None, "subject": None, "target": None}
    (tmp_path / "human.jsonl").write_text("".join(json.dumps(r) + "\n" for r in human))
    spec = ModelSpec.from_params(
        "human", {"backend": "file", "category": "human", "options": {"path": str(tmp_path / "human.jsonl")}}
    )
    b = bench()
    records, _, _ = run_method(
        b,
        b.method("direct", spec, 7),
        inst,
        spec=spec,
        cache=RequestCache(tmp_path / "c.sqlite"),
        seed=7,
        progress=False,
    )
    runs = {("human", "direct"): records, **{k: v for k, v in codar_runs(inst).items() if k[1] == "direct"}}
    models = {**MODELS, "human": {"category": "human"}}
    files, scores = run_tables(inst, runs, models, tables={"human": "human"})
    # intent: 10 instances, the 4th (k = 3) blank; labels right on k = 0, 2, 4, 6, 8
    assert (
        scores[("human", "direct")]["intent"]["label"] == 50.0
        and scores[("human", "direct")]["intent"]["subject"] == 90.0
    )
    table = [r["model"] for r in read_csv(files["intent.csv"])]
    assert table[0] == "human"  # the human row leads the table
    assert md_row(files["intent.md"], "human")[2:5] == ["50.00", "90.00", "90.00"]
    assert "Human row" not in files["intent.md"]
    bars = read_csv(files["figures/fig6.csv"])
    assert {r["model"] for r in bars} == {"a", "b", "human"}


def test_a_model_declared_text_only_has_its_category_marked_in_the_scenario_tables():
    inst = make_instances(10)
    runs = {k: v for k, v in codar_runs(inst).items() if k[1] == "direct"}
    models = {"a": {**MODELS["a"], "modalities": []}, "b": MODELS["b"]}
    files, _ = run_tables(inst, runs, models)
    assert md_row(files["intent.md"], "a")[0] == "open-weight (text-only)"
    assert {r["model"]: r["category"] for r in read_csv(files["intent.csv"])} == {
        "a": "open-weight (text-only)",
        "b": "proprietary",
    }
