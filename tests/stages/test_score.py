"""socialbench score over several runs (``--results-dir``, ``--run MODEL/METHOD``): one process, the results
layout, each run's file the same bytes as the single-run form writes; and each run's per-instance outcomes beside
its scores (the tables read them)."""

import json

import pytest

from socialbench.cli import app
from socialbench.core.errors import SocialbenchError
from tests.conftest import make_instance
from tests.stages.conftest import GOOD_PRED, RUNS, run_args, runner, write_jsonl


def test_score_writes_each_runs_scores_where_the_layout_puts_them(results):
    inst, root = results
    args = ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), *run_args(RUNS)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert sorted(p.relative_to(root / "scores").as_posix() for p in root.glob("scores/**/*.json")) == [
        "moca/r/codar.json",
        "moca/r/direct.json",
        "moca/s/direct.json",
    ]


def test_score_of_several_runs_writes_the_bytes_of_single_runs(tmp_path, results):
    inst, root = results
    res = runner.invoke(
        app, ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), *run_args(RUNS)]
    )
    assert res.exit_code == 0, res.output
    for run in RUNS:
        model, method = run.split("/")
        single = tmp_path / "single" / f"{model}-{method}.json"
        pred = root / "predictions" / "moca" / model / f"{method}.jsonl"
        args = ["score", "--benchmark", "moca", "--instances", str(inst), "--predictions", str(pred)]
        res = runner.invoke(app, [*args, "--out", str(single)])
        assert res.exit_code == 0, res.output
        assert single.read_bytes() == (root / "scores" / "moca" / model / f"{method}.json").read_bytes()


def test_score_checks_each_runs_records_are_of_that_run(tmp_path, results):
    inst, root = results
    wrong = root / "predictions" / "moca" / "s" / "codar.jsonl"
    wrong.write_bytes((root / "predictions" / "moca" / "s" / "direct.jsonl").read_bytes())  # s/direct's records
    args = ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), "--run", "s/codar"]
    res = runner.invoke(app, args)
    assert isinstance(res.exception, SocialbenchError) and "field 'method'" in str(res.exception)


@pytest.mark.parametrize("run", ["direct", "r/", "r/direct/x"])
def test_a_run_that_is_not_model_slash_method_is_refused(results, run):
    inst, root = results
    args = ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), "--run", run]
    res = runner.invoke(app, args)
    assert isinstance(res.exception, SocialbenchError) and "MODEL/METHOD" in str(res.exception)


def test_score_run_without_results_dir_is_refused(results):
    inst, _ = results
    res = runner.invoke(app, ["score", "--benchmark", "moca", "--instances", str(inst), "--run", "r/direct"])
    assert isinstance(res.exception, SocialbenchError) and "--results-dir" in str(res.exception)


def test_score_command_writes_metrics_per_scenario(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b", scenario="stance")])
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {
                "id": "a",
                "subject": "the speaker",
                "target": "the player",
                "mechanism": "expressive aggression",
                "label": "mock",
            },
        ],
    )
    out = tmp_path / "s.json"
    res = runner.invoke(
        app, ["score", "--benchmark", "moca", "--instances", str(inst), "--predictions", str(preds), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    scores = json.loads(out.read_text())
    assert scores["intent"]["holis"] == 100.0 and scores["stance"]["holis"] == 0.0
    assert set(scores["intent"]) == {
        "label",
        "subject",
        "target",
        "mechanism",
        "dyad",
        "faith",
        "holis",
        "c_sem_dyad",
        "invalid_rate",
        "n",
        "media_errors",
    }


def test_score_command_takes_a_taxonomy_file(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a", label="taunt", mechanism="irony")])
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [{"id": "a", "subject": "the speaker", "target": "the player", "mechanism": "Irony", "label": "taunt"}],
    )
    tax = tmp_path / "t.yaml"
    tax.write_text("labels: {intent: [taunt]}\nmechanisms: {intent: [irony]}\n")
    out = tmp_path / "s.json"
    res = runner.invoke(
        app,
        [
            "score",
            "--benchmark",
            "moca",
            "--instances",
            str(inst),
            "--predictions",
            str(preds),
            "--out",
            str(out),
            "--taxonomy",
            str(tax),
        ],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["intent"]["holis"] == 100.0


def score_args(inst, preds, out):
    return ["score", "--benchmark", "moca", "--instances", str(inst), "--predictions", str(preds), "--out", str(out)]


def test_score_duplicate_prediction_id_names_file_line_and_first_copy(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b")])
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps(r) + "\n" for r in [{"id": "a", **GOOD_PRED}, {"id": "b", **GOOD_PRED}])
        + "\n"
        + json.dumps({"id": "a", **GOOD_PRED, "label": "provoke"})
        + "\n"
    )
    out = tmp_path / "s.json"
    res = runner.invoke(app, score_args(inst, preds, out))
    assert res.exit_code != 0 and not out.exists()
    assert str(res.exception) == f"{preds}, record line 4, field 'id': duplicate id 'a' (first at line 1)"


def test_score_prediction_for_no_instance_is_an_error(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a")])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", **GOOD_PRED}, {"id": "zz", **GOOD_PRED}])
    res = runner.invoke(app, score_args(inst, preds, tmp_path / "s.json"))
    assert str(res.exception) == f"{preds}, record line 2, field 'id': id 'zz' matches no instance in {inst}"


def test_score_prediction_without_id_or_with_a_list_id_is_an_error(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a")])
    for bad in ({**GOOD_PRED}, {"id": ["a"], **GOOD_PRED}):
        preds = write_jsonl(tmp_path / "p.jsonl", [bad])
        res = runner.invoke(app, score_args(inst, preds, tmp_path / "s.json"))
        assert str(res.exception).startswith(f"{preds}, record line 1, field 'id': "), res.exception


def test_score_empty_instances_file_is_an_error(tmp_path):
    inst, preds, out = tmp_path / "i.jsonl", tmp_path / "p.jsonl", tmp_path / "s.json"
    inst.write_text("")
    preds.write_text("")
    res = runner.invoke(app, score_args(inst, preds, out))
    assert isinstance(res.exception, SocialbenchError) and not out.exists()
    assert str(res.exception).startswith(f"{inst}: ") and "empty" in str(res.exception)


def test_score_warns_how_many_instances_had_no_prediction(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b"), make_instance("c")])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "b", **GOOD_PRED}])
    out = tmp_path / "s.json"
    res = runner.invoke(app, score_args(inst, preds, out))
    assert res.exit_code == 0, res.output
    assert "2 of 3 instances have no prediction" in res.stderr and "no prediction" not in res.stdout
    assert json.loads(out.read_text())["intent"]["invalid_rate"] == 66.67


def test_score_empty_predictions_file_scores_everything_incorrect_with_the_warning(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b")])
    preds = tmp_path / "p.jsonl"
    preds.write_text("")
    out = tmp_path / "s.json"
    res = runner.invoke(app, score_args(inst, preds, out))
    assert res.exit_code == 0, res.output
    assert "2 of 2 instances have no prediction" in res.stderr
    s = json.loads(out.read_text())["intent"]
    assert (s["holis"], s["label"], s["invalid_rate"]) == (0.0, 0.0, 100.0)


def test_score_without_missing_predictions_prints_no_warning(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a")])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", **GOOD_PRED}])
    res = runner.invoke(app, score_args(inst, preds, tmp_path / "s.json"))
    assert res.exit_code == 0 and res.stderr == ""


def test_score_help_describes_its_paths_and_lists_the_benchmarks():
    out = runner.invoke(app, ["score", "--help"], env={"COLUMNS": "200"}).output
    assert "prediction records written by infer" in out and "one of: " in out


# ---- per-instance outcomes, which the tables read instead of scoring again (issue 42) --------------------------
def test_score_writes_each_runs_outcomes_where_the_layout_puts_them(results):
    inst, root = results
    args = ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), *run_args(RUNS)]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert sorted(p.relative_to(root / "outcomes").as_posix() for p in root.glob("outcomes/**/*.jsonl")) == [
        "moca/r/codar.jsonl",
        "moca/r/direct.jsonl",
        "moca/s/direct.jsonl",
    ]


def test_the_outcomes_hold_one_row_per_instance_in_order_with_sorted_keys(results):
    from socialbench.core.io import jsonl_text

    inst, root = results
    args = ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), "--run", "r/direct"]
    assert runner.invoke(app, args).exit_code == 0
    text = (root / "outcomes" / "moca" / "r" / "direct.jsonl").read_text()
    rows = [json.loads(line) for line in text.splitlines()]
    assert [r["id"] for r in rows] == [json.loads(line)["id"] for line in inst.read_text().splitlines()]
    assert text == jsonl_text(rows)  # core.io's JSON lines: keys sorted, so the same run gives the same bytes


def test_score_outcomes_option_writes_the_single_runs_outcomes(tmp_path):
    inst = write_jsonl(tmp_path / "i.jsonl", [make_instance("a"), make_instance("b", scenario="stance")])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", **GOOD_PRED}])
    res = runner.invoke(app, [*score_args(inst, preds, tmp_path / "s.json"), "--outcomes", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [(r["id"], r["group"], r["invalid"]) for r in rows] == [("a", "intent", False), ("b", "stance", True)]


def test_score_outcomes_option_with_results_dir_is_refused(results):
    inst, root = results
    args = ["score", "--benchmark", "moca", "--instances", str(inst), "--results-dir", str(root), "--run", "r/direct"]
    res = runner.invoke(app, [*args, "--outcomes", str(root / "o.jsonl")])
    assert isinstance(res.exception, SocialbenchError) and "without --predictions, --out, --outcomes" in str(
        res.exception
    )


def test_score_outcomes_of_a_benchmark_whose_tables_take_none_are_refused(tmp_path):
    from socialbench.core.benchmarks import register
    from socialbench.core.io import write_jsonl as write_records
    from tests.helpers.toybench.benchmark import ToyBenchmark, make_instances

    register(ToyBenchmark)
    inst = tmp_path / "i.jsonl"
    write_records(inst, make_instances(1))
    preds = write_jsonl(tmp_path / "p.jsonl", [])
    args = ["score", "--benchmark", "toybench", "--instances", str(inst), "--predictions", str(preds)]
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "s.json"), "--outcomes", str(tmp_path / "o.jsonl")])
    assert isinstance(res.exception, SocialbenchError) and "take no per-instance outcomes" in str(res.exception)
    assert not (tmp_path / "s.json").exists()


def test_score_of_a_benchmark_whose_tables_take_no_outcomes_makes_an_empty_outcomes_folder(tmp_path):
    from socialbench.core.benchmarks import register
    from socialbench.core.io import write_jsonl as write_records
    from tests.helpers.toybench.benchmark import ToyBenchmark, make_instances

    register(ToyBenchmark)
    inst = tmp_path / "i.jsonl"
    write_records(inst, make_instances(1))
    (tmp_path / "results" / "predictions" / "toybench" / "r").mkdir(parents=True)
    write_jsonl(tmp_path / "results" / "predictions" / "toybench" / "r" / "direct.jsonl", [])
    args = ["score", "--benchmark", "toybench", "--instances", str(inst), "--results-dir", str(tmp_path / "results")]
    res = runner.invoke(app, [*args, "--run", "r/direct"])
    assert res.exit_code == 0, res.output
    folder = tmp_path / "results" / "outcomes" / "toybench"
    assert folder.is_dir() and not any(folder.iterdir())  # the score job's declared output, as the scores'
