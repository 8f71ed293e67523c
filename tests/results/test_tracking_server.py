"""A shared MLflow tracking server on PostgreSQL (scripts/mlflow_server.sh): the URI from the
environment, two pipelines logging at once losing and duplicating nothing, recovery touching only
this host's abandoned runs, and the store's password reaching no run."""

from __future__ import annotations

import multiprocessing
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from socialbench.core.errors import ConfigError
from socialbench.results.tracking import EVAL_KEY_TAG, HOST_TAG, PROCESS_TAG, eval_key, log_evaluations
from socialbench.results.tracking_uri import resolve_tracking_uri
from tests.helpers.postgres import postgres_cluster
from tests.results.test_tracking import evaluation

REPO = Path(__file__).resolve().parents[2]


# ---- where the URI comes from -------------------------------------------------------------------------
def test_the_environment_uri_wins_over_params():
    got = resolve_tracking_uri({"tracking_uri": "sqlite:///mlflow.db"}, {"MLFLOW_TRACKING_URI": "http://h:5000"})
    assert got == "http://h:5000"


def test_params_keep_the_local_store_when_the_environment_names_none():
    assert resolve_tracking_uri({"tracking_uri": "sqlite:///mlflow.db"}, {}) == "sqlite:///mlflow.db"


def test_a_password_in_params_is_refused_without_echoing_it():
    with pytest.raises(ConfigError, match="mlflow.tracking_uri") as err:
        resolve_tracking_uri({"tracking_uri": "postgresql://u:hunter2@db/mlflow"}, {})
    assert "hunter2" not in str(err.value)


def test_the_params_schema_refuses_a_password_in_the_tracking_uri():
    import json

    import jsonschema

    schema = json.loads((REPO / "src/socialbench/core/schemas/params.schema.json").read_text())
    prop = schema["properties"]["mlflow"]["properties"]["tracking_uri"]
    jsonschema.validate("sqlite:///mlflow.db", prop)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate("postgresql://u:hunter2@db/mlflow", prop)


def test_params_with_a_password_in_the_tracking_uri_fail_to_load_without_echoing_it(tmp_path):
    from socialbench.core.config import load_params

    text = (REPO / "params.yaml").read_text()
    assert "tracking_uri: sqlite:///mlflow.db" in text
    bad = tmp_path / "params.yaml"
    bad.write_text(text.replace("tracking_uri: sqlite:///mlflow.db", "tracking_uri: postgresql://u:hunter2@db/m"))
    with pytest.raises(ConfigError, match="mlflow.tracking_uri: holds a password") as err:
        load_params(bad)
    assert "hunter2" not in str(err.value)


# ---- one server per module ------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    cluster = postgres_cluster()
    pg_url = cluster.url(f"mlflow_{secrets.token_hex(4)}")
    root = tmp_path_factory.mktemp("mlflow-server")
    port = _free_port()
    log = open(root / "server.log", "wb")
    env = {**os.environ, "MLFLOW_BACKEND_STORE_URI": pg_url, "MLFLOW_WORKERS": "1"}
    proc = subprocess.Popen(
        ["bash", str(REPO / "scripts/mlflow_server.sh"), str(root / "artifacts"), str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180  # the first start migrates the PostgreSQL schema
    while True:
        try:
            urllib.request.urlopen(f"{url}/health", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.close()
                tail = (root / "server.log").read_text()[-2000:]
                raise RuntimeError(f"mlflow server did not start: {tail}") from None
            time.sleep(0.5)
    yield url, cluster.password, root / "server.log"
    os.killpg(proc.pid, 15)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:  # its workers wait for idle keep-alive connections: not worth waiting for
        os.killpg(proc.pid, 9)
        proc.wait(10)
    log.close()


def _runs(url, experiment):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(url)
    exp = client.get_experiment_by_name(experiment)
    return client, exp, (client.search_runs([exp.experiment_id], max_results=1000) if exp else [])


def _log_in_clone(url, clone, models, barrier, results):
    os.chdir(clone)  # a clone of its own: no file lock is shared between the two
    evs = [evaluation(Path(clone), m) for m in models]
    barrier.wait()
    try:
        results.put(log_evaluations(evs, url, "two-pipelines", "mlartifacts"))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        results.put(repr(exc))


@pytest.mark.postgres
@pytest.mark.slow  # one MLflow server per module: its start migrates the schema (a minute)
def test_two_pipelines_logging_at_once_lose_and_duplicate_nothing(server, tmp_path):
    url, *_ = server
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    work = {"one": ["a", "b", "c"], "two": ["b", "c", "d"]}  # b and c: the same evaluation in both
    procs = []
    for name, models in work.items():
        (tmp_path / name).mkdir()
        procs.append(ctx.Process(target=_log_in_clone, args=(url, str(tmp_path / name), models, barrier, results)))
    for p in procs:
        p.start()
    got = [results.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(30)
    assert all(isinstance(g, dict) for g in got), got
    _, _, runs = _runs(url, "two-pipelines")
    keys = [r.data.tags[EVAL_KEY_TAG] for r in runs if EVAL_KEY_TAG in r.data.tags]
    expected = {eval_key(evaluation(tmp_path, m)) for m in "abcd"}
    assert sorted(keys) == sorted(expected)  # every evaluation once: none lost, none twice
    assert all(r.info.status == "FINISHED" for r in runs)
    assert sum(len(g["new"]) for g in got) == 4


@pytest.mark.postgres
@pytest.mark.slow  # one MLflow server per module: its start migrates the schema (a minute)
def test_recovery_marks_killed_only_this_hosts_runs_whose_process_is_gone(server, tmp_path):
    url, *_ = server
    from mlflow.tracking import MlflowClient

    client = MlflowClient(url)
    exp_id = client.create_experiment("recovery")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # another pipeline on this host
    try:
        host = socket.gethostname()
        other = client.create_run(exp_id, tags={HOST_TAG: "another-node", PROCESS_TAG: f"{os.getpid()}:"})
        mine_dead = client.create_run(exp_id, tags={HOST_TAG: host, PROCESS_TAG: f"{dead.pid}:"})
        mine_live = client.create_run(exp_id, tags={HOST_TAG: host, PROCESS_TAG: f"{live.pid}:"})
        log_evaluations([evaluation(tmp_path, "a")], url, "recovery", tmp_path / "mlartifacts")
        status = {r: client.get_run(r.info.run_id).info.status for r in (other, mine_dead, mine_live)}
    finally:
        live.kill()
        live.wait()
    assert status == {other: "RUNNING", mine_dead: "KILLED", mine_live: "RUNNING"}


@pytest.mark.postgres
@pytest.mark.slow  # one MLflow server per module: its start migrates the schema (a minute)
def test_the_store_password_reaches_no_run_and_no_server_log(server, tmp_path, monkeypatch):
    url, password, log = server
    monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
    uri = resolve_tracking_uri({"tracking_uri": "sqlite:///mlflow.db"})
    log_evaluations([evaluation(tmp_path, "p")], uri, "secret-check", tmp_path / "mlartifacts")
    _, _, runs = _runs(url, "secret-check")
    logged = " ".join(f"{k}={v}" for r in runs for d in (r.data.params, r.data.tags) for k, v in d.items())
    assert runs and password not in logged and password not in log.read_text(errors="replace")
