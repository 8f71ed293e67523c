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


def write_jsonl(path, records):
    """``records`` as JSON lines at ``path``; the path."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def png(path):
    """A real 4x4 PNG at ``path`` (prepare decodes images); its path as a string."""
    write_png(path)
    return str(path)


def media_in(folder):
    """prepare's --params allowing media in ``folder`` (media must lie in data/ or media.allowed_roots)."""
    params = folder / "media-params.yaml"
    params.write_text(f"media: {{allowed_roots: [{json.dumps(str(folder))}]}}\n")
    return ["--params", str(params)]


def main_error(monkeypatch, capsys, argv):
    """Run ``socialbench ARGV`` through cli.main; (exit code, stderr)."""
    import sys

    from socialbench.cli import main

    monkeypatch.setattr(sys, "argv", ["socialbench", *argv])
    with pytest.raises(SystemExit) as exc:
        main()
    return exc.value.code, capsys.readouterr().err


#: A MoCA prediction's answer fields that match make_instance's gold answer.
GOOD_PRED = {"subject": "the speaker", "target": "the player", "mechanism": "expressive aggression", "label": "mock"}


def cli_params(tmp_path):
    """params of two baseline models a and b, tracking into tmp_path/mlflow.db (tables and track)."""
    path = tmp_path / "params.yaml"
    path.write_text(
        "seed: 1\nmodels:\n  a: {backend: random, category: baseline}\n  b: {backend: prior, category: baseline}\n"
        f"mlflow: {{tracking_uri: 'sqlite:///{tmp_path}/mlflow.db', experiment: t}}\n"
    )
    return path


def metrics(holis=10.0, n=3):
    """One scenario's metrics as a MoCA score file holds them."""
    return {
        "label": 50.0,
        "subject": 50.0,
        "target": 50.0,
        "mechanism": 50.0,
        "dyad": 25.0,
        "faith": None,
        "holis": holis,
        "c_sem_dyad": None,
        "invalid_rate": 0.0,
        "n": n,
        "media_errors": 0,
    }


def score_file(tmp_path, model, content, method="direct"):
    """A score file of model/method under tmp_path/scores holding ``content`` (text, or JSON of it)."""
    path = tmp_path / "scores" / model / f"{method}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path
