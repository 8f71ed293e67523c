"""What the stage tests share: a small MoCA run's inputs and the infer command line."""

import json

import pytest
from typer.testing import CliRunner

from socialbench.cli import app
from tests.conftest import make_instance
from tests.helpers.moca_requests import write_png

runner = CliRunner()


@pytest.fixture
def inputs(tmp_path):
    """(instances, params) of a small MoCA run with the codar_script test double (every method, several rounds)."""
    write_png(tmp_path / "img.png")
    inst = tmp_path / "i.jsonl"
    inst.write_text(
        "".join(
            json.dumps(make_instance(f"x-{i}", media=[str(tmp_path / "img.png")], text=f"Nice job, genius #{i}."))
            + "\n"
            for i in range(3)
        )
    )
    params = tmp_path / "params.yaml"
    params.write_text(
        "seed: 3\nmodels:\n  r: {backend: codar_script, options: {reject_every: 2}}\n"
        "  s: {backend: codar_script, exclude_methods: {codar: no second look}}\n"
        # no retriever: the params default (the paper's web search) needs a key
        "moca: {methods: [direct, direct_constrained, codar], retrieval: {retriever: none}}\n"
        "cache: {path: " + str(tmp_path / "c.sqlite") + "}\n"
        "media: {allowed_roots: [" + str(tmp_path) + "]}\n"  # the image lies outside the repository's data
    )
    return inst, params


def infer(inst, params, *args):
    """Run ``socialbench infer`` on the instances with these params and further arguments."""
    base = ["infer", "--benchmark", "moca", "--instances", str(inst), "--params", str(params), "--no-progress"]
    return runner.invoke(app, [*base, *args])


def method_args(methods):
    """``--method m`` for each method."""
    return [a for m in methods for a in ("--method", m)]


RUNS = ("r/direct", "r/codar", "s/direct")


@pytest.fixture
def results(tmp_path, inputs):
    """(instances, results root) holding the predictions and traces of RUNS."""
    inst, params = inputs
    for model, methods in (("r", ("direct", "codar")), ("s", ("direct",))):
        res = infer(inst, params, "--model", model, "--results-dir", str(tmp_path / "results"), *method_args(methods))
        assert res.exit_code == 0, res.output
    return inst, tmp_path / "results"


def run_args(runs):
    return [a for r in runs for a in ("--run", r)]
