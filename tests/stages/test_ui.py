"""``socialbench ui`` (src/socialbench/stages/ui.py): the MLflow UI on the tracking store params name, with
telemetry off. The UI itself is MLflow's: the test double for ``os.execvp`` records what would run."""

import pytest

from socialbench.cli import app
from socialbench.stages import ui
from tests.stages.conftest import runner


@pytest.fixture
def execs(monkeypatch):
    """The command lines ``ui`` would hand over to (os.execvp recorded, not run); the environment it
    sets is restored after the test."""
    for name in ("MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK", "MLFLOW_HTTP_REQUEST_TIMEOUT"):
        monkeypatch.setenv(name, "unset-by-the-test")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    made = []
    monkeypatch.setattr(ui.os, "execvp", lambda file, args: made.append((file, args)))
    return made


def store_params(tmp_path):
    params = tmp_path / "params.yaml"
    store = f"sqlite:///{tmp_path}/mlflow.db"  # not made: ui names it to MLflow's UI only
    params.write_text(
        f"seed: 1\nmodels: {{r: {{backend: random}}}}\nmlflow: {{tracking_uri: '{store}', experiment: t}}\n"
    )
    return params


def test_ui_runs_mlflow_ui_on_the_params_store_at_host_and_port_with_telemetry_off(tmp_path, execs):
    res = runner.invoke(app, ["ui", "--params", str(store_params(tmp_path)), "--port", "5077", "--host", "0.0.0.0"])
    assert res.exit_code == 0, res.output
    cmd = [
        "mlflow",
        "ui",
        "--backend-store-uri",
        f"sqlite:///{tmp_path}/mlflow.db",
        "--host",
        "0.0.0.0",
        "--port",
        "5077",
    ]
    assert execs == [("mlflow", cmd)]
    assert res.output.splitlines() == [" ".join(cmd), "runs: http://0.0.0.0:5077"]  # no store yet: the UI's home
    assert ui.os.environ["MLFLOW_DISABLE_TELEMETRY"] == "true" and ui.os.environ["DO_NOT_TRACK"] == "true"


def test_a_port_out_of_range_is_refused_before_anything_runs(tmp_path, execs):
    res = runner.invoke(app, ["ui", "--params", str(store_params(tmp_path)), "--port", "70000"])
    assert res.exit_code == 2 and "--port" in res.output and execs == []
