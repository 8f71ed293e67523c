"""``socialbench tables`` (src/socialbench/stages/tables.py): the tables and headline from score files;
a bad score file is one clear error and nothing is half-written; order runs (params robustness,
``<run>__order<k>``) reach the stability tables only, never the paper tables or the headline; each
run's outcomes (written by the score stage) are read one at a time, checked against the instances and the
score file, and reduced to the benchmark's run summary."""

import functools
import gc
import json
import weakref
from dataclasses import replace

import pytest

from socialbench.cli import app
from socialbench.core.benchmarks import BENCHMARKS, register
from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.core.io import write_jsonl
from socialbench.core.subset import SubsetInfo
from socialbench.results.tables import Block, Table, formats, rendered, with_note
from socialbench.stages.tables import render_tables, subset_note
from tests.helpers.toybench.benchmark import ToyBenchmark, make_instances
from tests.helpers.toybench.results.hooks import ToyResults
from tests.stages.conftest import cli_params, metrics, runner, score_file


def tables_args(tmp_path, *score_paths):
    return [
        "tables",
        "--benchmark",
        "moca",
        "--params",
        str(cli_params(tmp_path)),
        "--out-dir",
        str(tmp_path / "tables"),
        "--headline",
        str(tmp_path / "head.json"),
        *map(str, score_paths),
    ]


def test_tables_writes_every_scenario_from_good_score_files(tmp_path):
    a = score_file(tmp_path, "a", {"intent": metrics(), "stance": metrics()})
    b = score_file(tmp_path, "b", {"intent": metrics(20.0), "stance": metrics()})
    res = runner.invoke(app, tables_args(tmp_path, a, b))
    assert res.exit_code == 0, res.output
    from socialbench.moca.results.stability import output_files as stability_files
    from socialbench.moca.results.tables import output_files

    assert {p.name for p in (tmp_path / "tables").iterdir()} == {
        f.split("/")[0] for f in [*output_files(["intent", "stance"]), *stability_files()]
    }
    assert set(json.loads((tmp_path / "head.json").read_text())) == {"a.direct", "b.direct"}


def bad_metric_missing():
    m = metrics()
    del m["holis"]
    return {"intent": metrics(), "stance": m}


@pytest.mark.parametrize(
    "content, where",
    [
        ('{"intent": {"label": 5', "not valid JSON"),
        ({}, "no scenarios"),
        ({"intent": 5}, "record scenario 'intent': must be an object"),
        ({"intent": {**metrics(), "holis": "high"}}, "record scenario 'intent', field 'holis'"),
        (bad_metric_missing(), "record scenario 'stance', field 'holis': missing"),
    ],
    ids=["truncated", "empty-object", "scenario-is-a-number", "string-metric", "missing-metric"],
)
def test_tables_bad_score_file_is_an_error_and_writes_nothing(tmp_path, content, where):
    good = score_file(tmp_path, "a", {"intent": metrics(), "stance": metrics()})
    bad = score_file(tmp_path, "b", content)
    res = runner.invoke(app, tables_args(tmp_path, good, bad))
    assert isinstance(res.exception, SocialbenchError), res.exception
    assert str(res.exception).startswith(str(bad)) and where in str(res.exception), res.exception
    assert not (tmp_path / "tables").exists() and not (tmp_path / "head.json").exists()


def test_tables_score_file_of_a_model_not_in_params_is_an_error(tmp_path):
    ghost = score_file(tmp_path, "ghost", {"intent": metrics()})
    res = runner.invoke(app, tables_args(tmp_path, ghost))
    assert isinstance(res.exception, SocialbenchError) and "model 'ghost'" in str(res.exception)
    assert not (tmp_path / "tables").exists()


def test_tables_missing_score_file_is_an_error_and_writes_nothing(tmp_path):
    good = score_file(tmp_path, "a", {"intent": metrics()})
    res = runner.invoke(app, tables_args(tmp_path, good, tmp_path / "scores" / "b" / "direct.json"))
    assert isinstance(res.exception, SocialbenchError) and "score file not found" in str(res.exception)
    assert not (tmp_path / "tables").exists()


def test_tables_put_the_macro_over_scenarios_beside_the_per_scenario_scores(tmp_path):
    a = score_file(tmp_path, "a", {"intent": metrics(10.0), "stance": metrics(20.0)})
    res = runner.invoke(app, tables_args(tmp_path, a))
    assert res.exit_code == 0, res.output
    head = json.loads((tmp_path / "head.json").read_text())["a.direct"]
    assert head["overall"] == {"dyad": 25.0, "faith": None, "holis": 15.0}
    all_md = (tmp_path / "tables" / "all.md").read_text()
    assert "### Overall: macro over scenarios (intent, stance; N = 3 each)" in all_md
    assert "| baseline | a | 50.00 | 50.00 | 50.00 | 50.00 | 25.00 | – | 15.00 |" in all_md


def test_every_markdown_and_latex_table_of_a_subset_run_says_so():
    info = SubsetInfo(n=10, seed=1, total=0, taken=0, by="scenario")
    table = Table("T", [Block(["x"], [])])
    files = rendered(with_note({**formats("a", table), "f.png": b"."}, subset_note(info)))
    assert "not full-run numbers" in files["a.md"] and "not full-run numbers" in files["a.tex"]
    assert files["a.csv"] == "x\n" and files["f.png"] == b"."
    assert "at most 10 instances" in subset_note(info) and "stratified by scenario" in subset_note(info)


def test_the_tables_stage_notes_a_subset_run_once_in_every_markdown_and_latex_file_and_never_in_a_csv(tmp_path):
    a = score_file(tmp_path, "a", {"intent": metrics(), "stance": metrics()})
    args = tables_args(tmp_path, a)
    params = tmp_path / "params.yaml"
    params.write_text(params.read_text() + "moca: {subset: {n: 2, seed: 1}}\n")
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    out = tmp_path / "tables"
    counts = {
        str(p.relative_to(out)): p.read_text().count("not full-run numbers")
        for p in out.rglob("*")
        if p.suffix in (".md", ".tex", ".csv")
    }
    assert "all.md" in counts and all(n == (not name.endswith(".csv")) for name, n in counts.items()), counts


# ---- order runs (params robustness, issue 34) ---------------------------------------------------------
def _scores(root, run, accuracy, n=2):
    path = root / "scores" / "toybench" / "r" / f"{run}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"all": {"accuracy": accuracy, "n": n}}))
    return path


def _render(tmp_path, name, scores):
    params = tmp_path / "params.yaml"
    params.write_text("seed: 1\nmodels: {r: {backend: random, category: baseline}}\ntoybench: {methods: [direct]}\n")
    out = tmp_path / name
    render_tables("toybench", scores, out / "tables", out / "headline.json", params)
    return (out / "tables" / "accuracy.md").read_bytes(), json.loads((out / "headline.json").read_text())


def test_order_runs_leave_the_paper_tables_and_the_headline_byte_identical(tmp_path):
    register(ToyBenchmark)
    paper = _scores(tmp_path, "direct", 50.0)
    orders = [_scores(tmp_path, "direct__order1", 0.0), _scores(tmp_path, "direct__order2", 100.0)]
    alone, head_alone = _render(tmp_path, "alone", [paper])
    with_orders, head = _render(tmp_path, "with", [paper, *orders])
    assert with_orders == alone and b"order" not in with_orders
    assert head == head_alone == {"r.direct": 50.0}


# ---- per-instance data: one run summary per run, from its outcomes (issues 32, 42) --------------------------
class SummaryResults(ToyResults):
    """TEST DOUBLE: toybench's tables with per-instance data; a run's summary is its rows' right/wrong flags.
    Records what the stage gives it: each summary call's source, and a weak reference to its first row."""

    calls: list[tuple[str, bool]] = []  # (source, whether the previous call's rows were freed)
    _last: weakref.ref | None = None

    def run_summary(self, rows, *, source):
        gc.collect()
        SummaryResults.calls.append((source, SummaryResults._last is None or SummaryResults._last() is None))
        SummaryResults._last = weakref.ref(rows[0])
        return [row["right"] for row in rows]

    def tables(self, scores, params, instances=None, summaries=None):
        files, head = super().tables(scores, params)
        files["summaries.json"] = json.dumps({f"{m}/{r}": v for (m, r), v in sorted((summaries or {}).items())})
        return files, head

    def stability_tables(self, scores, params, instances=None, summaries=None):
        return {"stability.json": json.dumps(sorted(f"{m}/{r}" for m, r in summaries or {}))}


class SummaryToy(ToyBenchmark):
    """TEST DOUBLE: the toy benchmark with per-instance tables (:class:`SummaryResults`)."""

    tables_per_instance = True

    @functools.cached_property
    def results(self):
        return SummaryResults(self)


class _Row(dict):
    """A dict that a weak reference can follow (plain dicts cannot be weakly referenced)."""


RUNS = ("direct", "direct__order1", "direct__order2")


@pytest.fixture
def summary_toy(tmp_path, monkeypatch):
    """Runs r/direct (2 of 3 right), r/direct__order1 (none right) and r/direct__order2 (all right) of
    three toy instances, with their instances and outcomes files; SummaryToy in the registry."""
    import socialbench.core.io as io
    import socialbench.stages.tables as stage

    monkeypatch.setitem(BENCHMARKS.classes, "toybench", SummaryToy)
    monkeypatch.setattr(SummaryResults, "calls", [])
    monkeypatch.setattr(SummaryResults, "_last", None)
    # the stage's read_jsonl_lines (from core.io) reads weakly referenceable rows
    monkeypatch.setattr(
        stage,
        "read_jsonl_lines",
        lambda path, _real=io.read_jsonl_lines: [replace(jl, record=_Row(jl.record)) for jl in _real(path)],
    )
    insts = make_instances(3)
    write_jsonl(tmp_path / "test.jsonl", insts)
    right = {"direct": [True, True, False], "direct__order1": [False] * 3, "direct__order2": [True] * 3}
    scores = []
    for run in RUNS:
        write_jsonl(
            tmp_path / "outcomes" / "r" / f"{run}.jsonl",
            [{"id": i["id"], "group": "all", "right": r} for i, r in zip(insts, right[run])],
        )
        scores.append(_scores(tmp_path, run, round(100 * sum(right[run]) / 3, 2), n=3))
    return scores


def _render_per_instance(tmp_path, scores):
    params = tmp_path / "params.yaml"
    params.write_text("seed: 1\nmodels: {r: {backend: random, category: baseline}}\ntoybench: {methods: [direct]}\n")
    out = tmp_path / "out" / "tables"
    render_tables(
        "toybench",
        scores,
        out,
        tmp_path / "out" / "headline.json",
        params,
        tmp_path / "test.jsonl",
        tmp_path / "outcomes",
    )
    return json.loads((out / "summaries.json").read_text()), json.loads((out / "stability.json").read_text())


def test_the_tables_get_each_runs_summary_and_the_paper_tables_only_the_paper_runs(tmp_path, summary_toy):
    summaries, stability = _render_per_instance(tmp_path, summary_toy)
    assert summaries == {"r/direct": [True, True, False]}
    assert stability == ["r/direct", "r/direct__order1", "r/direct__order2"]


def test_each_runs_outcomes_are_summarised_once_and_freed_before_the_next_run_is_read(tmp_path, summary_toy):
    _render_per_instance(tmp_path, summary_toy)
    sources = [source for source, _ in SummaryResults.calls]
    assert sorted(sources) == sorted(str(tmp_path / "outcomes" / "r" / f"{run}.jsonl") for run in RUNS)
    assert all(freed for _, freed in SummaryResults.calls)  # no run's rows outlive its summary


def test_the_tables_read_no_predictions_for_per_instance_statistics(tmp_path, summary_toy):
    assert not (tmp_path / "preds").exists()  # the fixture writes none: the outcomes are all the tables read
    summaries, _ = _render_per_instance(tmp_path, summary_toy)
    assert summaries == {"r/direct": [True, True, False]}


def test_a_run_without_an_outcomes_file_is_an_error_that_says_to_rerun_score(tmp_path, summary_toy):
    (tmp_path / "outcomes" / "r" / "direct__order1.jsonl").unlink()
    with pytest.raises(
        DataError, match=r"direct__order1\.jsonl: outcomes of r/direct__order1 not found .*rerun socialbench score"
    ):
        _render_per_instance(tmp_path, summary_toy)
    assert not (tmp_path / "out").exists()


def test_outcomes_of_other_instances_are_an_error_naming_the_line_and_writing_nothing(tmp_path, summary_toy):
    path = tmp_path / "outcomes" / "r" / "direct.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    write_jsonl(path, [{**rows[0], "id": "elsewhere"}, *rows[1:]])
    with pytest.raises(DataError, match=r"direct\.jsonl, record line 1, field 'id': the outcome of 'elsewhere'"):
        _render_per_instance(tmp_path, summary_toy)
    assert not (tmp_path / "out").exists()


def test_outcomes_whose_groups_disagree_with_the_score_file_are_an_error_naming_both(tmp_path, summary_toy):
    path = tmp_path / "outcomes" / "r" / "direct.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    write_jsonl(path, [*rows[:2], {**rows[2], "group": "other"}])
    with pytest.raises(
        DataError,
        match=r"record group 'all', field 'group': 2 outcome\(s\) in the group but 3 in the score file .*direct\.json",
    ):
        _render_per_instance(tmp_path, summary_toy)


def test_instances_without_an_outcomes_folder_is_a_usage_error(tmp_path, summary_toy):
    params = tmp_path / "params.yaml"
    params.write_text("seed: 1\nmodels: {r: {backend: random, category: baseline}}\ntoybench: {methods: [direct]}\n")
    with pytest.raises(ConfigError, match="--instances and --outcomes-dir go together"):
        render_tables("toybench", summary_toy, tmp_path / "t", tmp_path / "h.json", params, tmp_path / "test.jsonl")
