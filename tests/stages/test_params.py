"""``socialbench check-params`` and ``socialbench benchmarks`` (src/socialbench/stages/params.py); params
validation itself is tested in tests/core/test_config.py."""

import json

from socialbench.cli import app
from tests.stages.conftest import runner


def test_invalid_params_exit_2_with_the_key_named(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text("seed: 1\nmodels: {r: {backend: random, temprature: 0}}\n")
    res = runner.invoke(app, ["check-params", "--params", str(bad)])
    assert res.exit_code != 0
    assert "temprature" in str(res.exception) or "temprature" in res.output


def test_benchmarks_lists_each_registered_benchmark_with_its_methods():
    res = runner.invoke(app, ["benchmarks"])
    lines = dict(line.split(": methods ", 1) for line in res.output.splitlines())
    assert res.exit_code == 0 and "direct" in lines["moca"].split(", ") and "codar" in lines["moca"].split(", ")


def test_check_params_prints_the_params_with_defaults_filled_as_sorted_json(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("seed: 1\nmodels: {r: {backend: random}}\n")
    res = runner.invoke(app, ["check-params", "--params", str(params)])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.output)
    assert printed["models"]["r"]["category"] == "baseline"  # a default the file does not give
    assert list(printed) == sorted(printed) and res.output.rstrip("\n") == json.dumps(printed, indent=2, sort_keys=True)


def test_check_params_writes_params_with_an_overlay_put_over_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text("seed: 1\nmodels: {r: {backend: random}}\n")
    (tmp_path / "over.yaml").write_text("seed: 2\nmodels: {p: {backend: prior}}\n")
    res = runner.invoke(app, ["check-params", "--overlay", "over.yaml", "--out", "merged.yaml"])
    assert res.exit_code == 0, res.output
    merged = json.loads((tmp_path / "merged.yaml").read_text())
    assert merged["seed"] == 2 and list(merged["models"]) == ["p"]
