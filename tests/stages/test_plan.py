"""socialbench plan (src/socialbench/stages/plan.py) and subset runs (params <benchmark>.subset), on a
small MoCA run with the codar_script test double: no pipeline, a request cache in tmp_path."""

import json

from typer.testing import CliRunner

from socialbench.cli import app
from tests.stages.conftest import infer, method_args

runner = CliRunner()
KEYS = {
    "benchmark",
    "model",
    "run",
    "calls_min",
    "calls_max",
    "cached",
    "new_calls_max",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "wall_s",
}


def plan(inst, params, *args):
    res = runner.invoke(app, ["plan", "--params", str(params), "--instances", f"moca={inst}", "--json", *args])
    assert res.exit_code == 0, res.output
    return {(r["model"], r["run"]): r for r in json.loads(res.output)}


def said(res) -> str:
    """What a command said: its output and, for an error, its one-line message."""
    return res.output + (str(res.exception) if res.exception else "")


def stats(results, model, run):
    return json.loads((results / "runs" / "moca" / model / f"{run}.stats.json").read_text())


def test_plan_lists_every_run_params_define_with_its_numbers(inputs):
    rows = plan(*inputs)
    # s excludes codar in params: no run, no row
    assert sorted(rows) == [
        ("r", "codar"),
        ("r", "direct"),
        ("r", "direct_constrained"),
        ("s", "direct"),
        ("s", "direct_constrained"),
    ]
    assert all(KEYS <= set(r) for r in rows.values())
    assert rows[("r", "direct")]["cost_usd"] is None  # no price in params: unknown, not 0


def test_planned_calls_match_the_run_and_a_finished_run_plans_no_new_call(tmp_path, inputs):
    inst, params = inputs
    before = plan(inst, params, "--model", "r")
    res = infer(inst, params, "--model", "r", "--results-dir", str(tmp_path / "res"), *method_args(["direct", "codar"]))
    assert res.exit_code == 0, res.output
    direct, codar = stats(tmp_path / "res", "r", "direct"), stats(tmp_path / "res", "r", "codar")
    assert before[("r", "direct")]["calls_min"] == before[("r", "direct")]["calls_max"] == direct["requests"]
    assert before[("r", "codar")]["calls_min"] <= codar["requests"] <= before[("r", "codar")]["calls_max"]
    assert abs(before[("r", "direct")]["input_tokens"] - direct["input_tokens"]) <= 0.25 * direct["input_tokens"]
    after = plan(inst, params, "--model", "r")
    for run, s in (("direct", direct), ("codar", codar)):
        assert after[("r", run)]["new_calls_max"] == 0 and after[("r", run)]["cached"] == s["requests"]
        assert after[("r", run)]["input_tokens"] == s["input_tokens"]


def test_plan_writes_json_and_markdown_files(tmp_path, inputs):
    inst, params = inputs
    res = runner.invoke(
        app,
        [
            "plan",
            "--params",
            str(params),
            "--instances",
            f"moca={inst}",
            "--out",
            str(tmp_path / "p" / "plan.json"),
            "--md",
            str(tmp_path / "p" / "plan.md"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert len(json.loads((tmp_path / "p" / "plan.json").read_text())) == 5
    assert "| moca | r | codar |" in (tmp_path / "p" / "plan.md").read_text()


def test_plan_warns_when_a_run_exceeds_its_budget(inputs):
    inst, params = inputs
    params.write_text(params.read_text() + "plan: {run_budget_calls: 5}\n")
    res = runner.invoke(app, ["plan", "--params", str(params), "--instances", f"moca={inst}"])
    assert res.exit_code == 0, res.output
    assert "plan: warning: moca/r/codar: up to" in res.output and "exceed the budget of 5 calls" in res.output


def test_plan_refuses_an_unknown_model_with_its_key(inputs):
    inst, params = inputs
    res = runner.invoke(app, ["plan", "--params", str(params), "--instances", f"moca={inst}", "--model", "nope"])
    assert res.exit_code != 0 and "models.nope: no such model" in said(res)


def test_plan_refuses_an_unknown_run_with_its_key(inputs):
    inst, params = inputs
    res = runner.invoke(app, ["plan", "--params", str(params), "--instances", f"moca={inst}", "--run", "nope"])
    assert res.exit_code != 0 and "--run nope" in said(res) and "methods" in said(res)


def test_params_naming_an_unknown_run_are_refused_by_plan(inputs):
    inst, params = inputs
    params.write_text(params.read_text().replace("methods: [direct,", "methods: [nope, direct,"))
    res = runner.invoke(app, ["plan", "--params", str(params), "--instances", f"moca={inst}"])
    assert res.exit_code != 0 and "moca.methods.0" in said(res)


def test_check_params_refuses_a_price_of_the_wrong_shape(inputs):
    _, params = inputs
    params.write_text(params.read_text().replace("reject_every: 2}}", "reject_every: 2}, price: 3.0}"))
    res = runner.invoke(app, ["check-params", "--params", str(params)])
    assert res.exit_code != 0 and "models.r.price" in said(res)


def test_check_params_refuses_a_price_without_its_output_part(inputs):
    _, params = inputs
    params.write_text(params.read_text().replace("reject_every: 2}}", "reject_every: 2}, price: {input: 1}}"))
    res = runner.invoke(app, ["check-params", "--params", str(params)])
    assert res.exit_code != 0 and "models.r.price" in said(res) and "output" in said(res)


# ---- subsets ------------------------------------------------------------------------------------------
def with_subset(params, n):
    params.write_text(params.read_text().replace("moca: {", "moca: {subset: {n: " + str(n) + ", seed: 1}, "))


def test_a_subset_run_answers_its_sample_and_records_it(tmp_path, inputs):
    inst, params = inputs
    with_subset(params, 1)
    res = infer(inst, params, "--model", "r", "--results-dir", str(tmp_path / "res"), "--method", "direct")
    assert res.exit_code == 0, res.output
    s = stats(tmp_path / "res", "r", "direct")
    assert s["requests"] == 1 and s["subset"]["taken"] == 1 and s["subset"]["total"] == 3
    assert len((tmp_path / "res/predictions/moca/r/direct.jsonl").read_text().splitlines()) == 1


def test_the_full_run_after_a_subset_reuses_every_cached_call(tmp_path, inputs):
    inst, params = inputs
    full = params.read_text()
    with_subset(params, 2)
    assert (
        infer(inst, params, "--model", "r", "--results-dir", str(tmp_path / "sub"), "--method", "codar").exit_code == 0
    )
    subset_calls = stats(tmp_path / "sub", "r", "codar")["requests"]
    params.write_text(full)
    assert plan(inst, params, "--model", "r", "--run", "codar")[("r", "codar")]["cached"] == subset_calls
    assert (
        infer(inst, params, "--model", "r", "--results-dir", str(tmp_path / "full"), "--method", "codar").exit_code == 0
    )
    s = stats(tmp_path / "full", "r", "codar")
    assert s["cache_hits"] == subset_calls and "subset" not in s


def test_a_subset_larger_than_the_data_says_so_and_runs_everything(tmp_path, inputs):
    inst, params = inputs
    with_subset(params, 50)
    res = infer(inst, params, "--model", "r", "--results-dir", str(tmp_path / "res"), "--method", "direct")
    assert res.exit_code == 0, res.output
    assert "moca.subset: n=50 is larger than the data (3 instances" in said(res)
    assert stats(tmp_path / "res", "r", "direct")["requests"] == 3


def test_the_plan_of_a_subset_counts_its_sample(inputs):
    inst, params = inputs
    with_subset(params, 2)
    assert plan(inst, params, "--model", "r", "--run", "direct")[("r", "direct")]["instances"] == 2


def test_scores_of_a_subset_run_cover_its_sample_only(tmp_path, inputs):
    inst, params = inputs
    with_subset(params, 1)
    assert (
        infer(inst, params, "--model", "r", "--results-dir", str(tmp_path / "res"), "--method", "direct").exit_code == 0
    )
    res = runner.invoke(
        app,
        [
            "score",
            "--benchmark",
            "moca",
            "--instances",
            str(inst),
            "--params",
            str(params),
            "--results-dir",
            str(tmp_path / "res"),
            "--run",
            "r/direct",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "no prediction" not in res.output


def test_order_runs_are_planned_made_through_the_request_cache_and_recorded_like_any_run(tmp_path, inputs):
    inst, params = inputs
    params.write_text(
        params.read_text().replace(
            "retrieval: {retriever: none}}",
            "retrieval: {retriever: none}, robustness: {orders: 2, models: [r], methods: [direct]}}",
        )
    )
    before = plan(inst, params)
    assert ("r", "direct__order1") in before and ("s", "direct__order1") not in before
    assert before[("r", "direct__order1")]["calls_max"] == before[("r", "direct")]["calls_max"]
    res = infer(
        inst, params, "--model", "r", "--results-dir", str(tmp_path / "res"), *method_args(["direct", "direct__order1"])
    )
    assert res.exit_code == 0, res.output
    records = [
        json.loads(x) for x in (tmp_path / "res/predictions/moca/r/direct__order1.jsonl").read_text().splitlines()
    ]
    assert [r["order"]["index"] for r in records] == [1, 1, 1]
    assert stats(tmp_path / "res", "r", "direct__order1")["provenance"]["option_order"] == 1
    after = plan(inst, params, "--model", "r", "--run", "direct__order1")
    assert after[("r", "direct__order1")]["new_calls_max"] == 0


def test_an_image_is_planned_at_its_own_size_or_image_size_when_smaller(tmp_path):
    from socialbench.stages.plan import image_side
    from tests.helpers.moca_requests import write_png

    part = write_png(tmp_path / "a.png", size=(1000, 500))
    assert image_side(None)(part) == 1000
    assert image_side(448)(part) == 448


def test_a_backend_that_reads_no_prompt_is_planned_with_0_input_tokens():
    from socialbench.core.backend import ModelSpec
    from socialbench.stages.plan import token_counter
    from tests.helpers.moca_requests import moca_request

    for backend in ("minilm", "random", "file"):
        counter = token_counter(ModelSpec(name="m", backend=backend))
        assert counter(moca_request(0)) == 0 and "reads no prompt" in counter.label


def test_a_model_folder_s_own_tokenizer_counts_its_input_tokens(tmp_path):
    from transformers import AutoTokenizer

    from socialbench.core.backend import ModelSpec
    from socialbench.stages.plan import token_counter
    from tests.helpers.moca_requests import moca_request
    from tests.helpers.tiny_vlm import build_tiny_llm

    folder = build_tiny_llm(tmp_path / "llm")
    request = moca_request(0)
    counter = token_counter(ModelSpec(name="m", backend="hf", model_id="org/name", model_path=str(folder)))
    tok = AutoTokenizer.from_pretrained(folder)
    text = "\n".join(m.text() for m in request.messages)
    assert counter(request) == len(tok(text, add_special_tokens=False)["input_ids"])
    assert counter.label == f"tokenizer {folder}"
