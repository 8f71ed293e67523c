"""One shared `vllm serve` per model on a node (backends.vllm_servers), against the stand-in executable
(TEST DOUBLE tests/helpers/fake_vllm_serve.py speaking the OpenAI wire protocol on loopback); each test
has its own registry folder, so nothing is shared with other test runs on the machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from socialbench.backends.vllm_servers import DIR_ENV, KEEP_ENV, SharedServers, healthy, server_key, stop_servers
from socialbench.cli import app
from socialbench.core.backend import create_backend
from socialbench.core.resources import server_url_env
from tests.backends.test_vllm_backend import spec_for
from tests.helpers.loopback import LoopbackServer
from tests.helpers.moca_requests import moca_request


@pytest.fixture(autouse=True)
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv(DIR_ENV, str(tmp_path / "servers"))
    monkeypatch.delenv(KEEP_ENV, raising=False)
    monkeypatch.delenv(server_url_env("qwen-test"), raising=False)
    monkeypatch.setenv("FAKE_VLLM_STARTUP_S", "0.2")
    return tmp_path / "servers"


def starts(log_path) -> int:
    """How many servers the stand-in started (each prints its command line once)."""
    return log_path.read_text().count("FAKE_VLLM_ARGS ") if log_path.exists() else 0


def answer_all(backend, n=2):
    got = {}
    backend.complete_many([moca_request(i) for i in range(n)], lambda i, r: got.__setitem__(i, r))
    assert len(got) == n and all(r.error is None for r in got.values()), got
    return got


def test_two_jobs_of_a_model_share_one_server(tmp_path):
    first, second = create_backend(spec_for(tmp_path)), create_backend(spec_for(tmp_path))
    try:
        answer_all(first)
        answer_all(second)
        assert first.lease.owner and not second.lease.owner
        assert second.base_url == first.base_url and starts(tmp_path / "vllm.log") == 1
        (record,) = SharedServers().records()
        assert record["model"] == "qwen-test" and len(record["users"]) == 2
    finally:
        second.close()
        first.close()


def test_the_last_job_to_close_stops_the_server(tmp_path, registry):
    first, second = create_backend(spec_for(tmp_path)), create_backend(spec_for(tmp_path))
    answer_all(first)
    answer_all(second)
    proc, port = first.server.proc, first.lease.port
    second.close()
    assert healthy(port)  # the first job still uses it
    first.close()
    assert proc.poll() is not None and not healthy(port)
    assert SharedServers().records() == [] and not list(registry.glob("*.json"))


def test_the_job_that_started_the_server_waits_for_the_others_before_stopping_it(tmp_path):
    owner, other = create_backend(spec_for(tmp_path)), create_backend(spec_for(tmp_path))
    answer_all(owner)
    answer_all(other)
    owner.servers.poll_s = 0.05
    port = other.lease.port
    closing = threading.Thread(target=owner.close)
    closing.start()
    time.sleep(0.5)
    assert closing.is_alive() and healthy(port)  # its allocation holds the other job's server
    answer_all(other)
    other.close()
    closing.join(timeout=30)
    assert not closing.is_alive() and not healthy(port)


def test_a_server_whose_jobs_differ_in_tensor_parallelism_is_not_shared(tmp_path):
    two, four = create_backend(spec_for(tmp_path)), create_backend(spec_for(tmp_path, tensor_parallel_size=4))
    try:
        answer_all(two)
        answer_all(four)
        assert two.lease.owner and four.lease.owner and two.lease.port != four.lease.port
    finally:
        two.close()
        four.close()


def test_the_key_ignores_the_port_only():
    cmd = ["vllm", "serve", "m", "--port", "8001", "--tensor-parallel-size", "2"]
    same = ["vllm", "serve", "m", "--port", "9002", "--tensor-parallel-size", "2"]
    other = ["vllm", "serve", "m", "--port", "8001", "--tensor-parallel-size", "4"]
    assert server_key(cmd, 8001) == server_key(same, 9002) != server_key(other, 8001)


def test_a_kept_server_outlives_its_jobs_until_the_pipeline_stops_it(tmp_path, monkeypatch):
    monkeypatch.setenv(KEEP_ENV, "1")  # a local pipeline (the Snakefile's onstart)
    first = create_backend(spec_for(tmp_path))
    answer_all(first)
    port = first.lease.port
    first.close()
    assert healthy(port)
    second = create_backend(spec_for(tmp_path))  # the model's next job attaches: loaded once
    answer_all(second)
    second.close()
    assert starts(tmp_path / "vllm.log") == 1
    assert stop_servers(started_in=os.getcwd()) == 1  # the Snakefile's onsuccess/onerror
    assert not healthy(port) and SharedServers().records() == []


def test_a_job_that_died_without_closing_does_not_keep_the_server_in_use(tmp_path):
    backend = create_backend(spec_for(tmp_path))
    answer_all(backend)
    path = next(SharedServers().dir.glob("*.json"))
    record = json.loads(path.read_text())
    record["users"].append("999999999:1:dead")  # a killed job's entry
    path.write_text(json.dumps(record))
    port = backend.lease.port
    backend.close()
    assert not healthy(port)


def test_a_server_url_in_the_environment_is_used_and_none_is_started(tmp_path, monkeypatch):
    with LoopbackServer("openai") as srv:
        monkeypatch.setenv(server_url_env("qwen-test"), srv.url)
        backend = create_backend(spec_for(tmp_path, served_model_name="qwen-served"))
        answer_all(backend, 1)
        backend.close()
        body = srv.completions()[0].body
    assert backend.server is None and backend.lease is None and body["model"] == "qwen-served"
    assert starts(tmp_path / "vllm.log") == 0 and SharedServers().records() == []


def test_serve_list_and_stop_show_and_stop_the_idle_servers(tmp_path, monkeypatch):
    monkeypatch.setenv(KEEP_ENV, "1")
    backend = create_backend(spec_for(tmp_path))
    answer_all(backend)
    port = backend.lease.port
    backend.close()
    runner = CliRunner()
    listed = runner.invoke(app, ["serve", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    (record,) = json.loads(listed.output)
    assert record["port"] == port and record["users"] == [] and record["running"]
    stopped = runner.invoke(app, ["serve", "stop"])
    assert stopped.exit_code == 0 and f"stopped qwen-test (port {port}" in stopped.output
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)


JOB = """
import json, sys
from pathlib import Path
from socialbench.core.backend import create_backend
from tests.backends.test_vllm_backend import spec_for
from tests.helpers.moca_requests import moca_request
backend = create_backend(spec_for(Path(sys.argv[1])))
response = backend.complete(moca_request(0))
print(json.dumps({"owner": backend.lease.owner, "port": backend.lease.port, "error": response.error}))
backend.close()
"""


def test_a_job_in_another_process_attaches_to_the_running_server(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    first = create_backend(spec_for(tmp_path))
    try:
        answer_all(first)
        env = {**os.environ, "PYTHONPATH": f"{repo / 'src'}{os.pathsep}{repo}"}
        done = subprocess.run([sys.executable, "-c", JOB, str(tmp_path)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        job = json.loads(done.stdout.strip().splitlines()[-1])
        assert job == {"owner": False, "port": first.lease.port, "error": None}
        assert starts(tmp_path / "vllm.log") == 1 and len(SharedServers().records()[0]["users"]) == 1
    finally:
        first.close()


# ---- what is signalled: only a process proven to be the server a record names (issue 33, class 1) -------
def plant(registry: Path, proc: subprocess.Popen | None, key: str = "abc", **fields) -> Path:
    """A hand-written (or stale) record naming ``proc``: by default with its true start time and a model
    server's command line that ``proc`` does not run."""
    from socialbench.core.processes import process_started

    registry.mkdir(parents=True, exist_ok=True)
    record = {
        "key": key,
        "model": key,
        "pid": proc.pid if proc else 0,
        "pid_started": process_started(proc.pid) if proc else None,
        "port": 5,
        "command": ["vllm", "serve", "m", "--port", "5"],
        "users": [],
        **fields,
    }
    path = registry / f"{key}.json"
    path.write_text(json.dumps(record))
    return path


@pytest.fixture
def bystander():
    """An unrelated process in its own session, as a server is started (TEST DOUBLE: sleep)."""
    proc = subprocess.Popen(["sleep", "600"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def stop_output(*extra: str):
    done = CliRunner().invoke(app, ["serve", "stop", *extra])
    assert done.exit_code == 0, done.output
    return done.output


def test_a_record_naming_an_unrelated_process_is_removed_as_stale_and_the_process_is_not_signalled(registry, bystander):
    path = plant(registry, bystander)
    out = stop_output("--force")
    assert "removed the stale record" in out and "runs another command than the recorded server's" in out
    assert "nothing was signalled" in out and "stopped abc" not in out
    time.sleep(0.2)
    assert bystander.poll() is None and not path.exists()


def test_a_record_whose_command_is_the_process_but_no_model_server_is_stale(registry, bystander):
    plant(registry, bystander, command=["sleep", "600"])
    assert "the recorded command is not a model server's" in stop_output("--force")
    assert bystander.poll() is None


def test_a_record_whose_pid_was_reused_is_stale(registry, bystander):
    plant(registry, bystander, pid_started="1")
    assert "another process has the pid now" in stop_output()
    assert bystander.poll() is None


def test_a_record_without_a_start_time_is_never_acted_on(registry, bystander):
    plant(registry, bystander, pid_started=None)
    assert "holds no start time" in stop_output("--force")
    assert bystander.poll() is None


def test_a_record_whose_process_is_gone_is_reported_and_removed(registry):
    gone = subprocess.Popen(["true"])
    gone.wait()
    path = plant(registry, gone, pid_started="1")
    assert f"no process with pid {gone.pid} runs" in stop_output()
    assert not path.exists()


def test_serve_list_shows_a_stale_record_as_stale_and_keeps_it(registry, bystander):
    path = plant(registry, bystander)
    listed = CliRunner().invoke(app, ["serve", "list"])
    assert listed.exit_code == 0 and "(stale: pid" in listed.output and path.exists()


@pytest.mark.parametrize("pid", [0, -1, 1, 2**40])
def test_a_record_naming_a_pid_no_record_may_name_is_refused_and_nothing_is_signalled(registry, pid):
    from socialbench.core.errors import DataError

    path = plant(registry, None, pid=pid)
    with pytest.raises(DataError, match="field 'pid': refused"):
        SharedServers().stop(force=True)
    assert path.exists()  # the user removes it, having read why


def test_a_record_naming_this_process_or_its_group_is_refused(registry):
    from socialbench.core.errors import DataError

    for pid in (os.getpid(), os.getpgrp()):
        plant(registry, None, pid=pid)
        with pytest.raises(DataError, match="own process group|is this process"):
            SharedServers().stop(force=True)


def test_a_record_key_that_is_a_path_is_refused_and_no_lock_is_written_outside(registry):
    from socialbench.core.errors import DataError, SocialbenchError

    plant(registry, None, key="abc", pid=4242, **{})
    record = json.loads((registry / "abc.json").read_text())
    record["key"] = "../escape"
    (registry / "abc.json").write_text(json.dumps(record))
    with pytest.raises(DataError, match="record keys are names, never paths"):
        SharedServers().stop(force=True)
    with pytest.raises(SocialbenchError, match="no server record key"):
        with SharedServers()._locked("../escape"):
            pass
    assert not (registry.parent / "escape.lock").exists() and not list(registry.parent.glob("*.lock"))


def test_files_of_the_folder_that_are_not_records_are_named_and_left_alone(registry, tmp_path):
    registry.mkdir()
    (registry / "notes.txt").write_text("mine")
    (registry / "a.b.json").write_text("{}")
    (registry / "sub").mkdir()
    (registry / "link.json").symlink_to(tmp_path / "elsewhere.json")
    before = sorted(p.name for p in registry.iterdir())
    for command in (["serve", "list"], ["serve", "stop", "--force"]):
        done = CliRunner().invoke(app, command)
        assert done.exit_code == 0, done.output
        assert "not server records, left alone: a.b.json, link.json, notes.txt, sub/" in done.output
    assert sorted(p.name for p in registry.iterdir()) == before and (registry / "notes.txt").read_text() == "mine"


def test_json_files_of_another_program_in_the_folder_are_named_left_alone_and_the_stop_goes_on(registry, bystander):
    registry.mkdir()
    (registry / "moca.json").write_text('{"new": [], "existing": ["r1"], "parent": null}')  # results/mlflow's
    (registry / "meetingtom.json").write_text("{}")
    path = plant(registry, bystander)  # a stale record beside them
    done = CliRunner().invoke(app, ["serve", "stop", "--force"])
    assert done.exit_code == 0, done.output
    assert "not server records, left alone: meetingtom.json, moca.json" in done.output
    assert "removed the stale record" in done.output and not path.exists()
    assert (registry / "moca.json").read_text() == '{"new": [], "existing": ["r1"], "parent": null}'
    assert sorted(p.name for p in registry.iterdir() if not p.name.endswith(".lock")) == [
        "meetingtom.json",
        "moca.json",
    ]


def test_a_json_object_holding_any_record_field_is_a_record_and_checked():
    from socialbench.backends.vllm_servers import is_foreign

    assert is_foreign({"new": []}) and is_foreign({})
    assert not is_foreign({"pid": 0}) and not is_foreign({"key": None}) and not is_foreign([1, 2])


def test_a_refused_record_beside_foreign_json_files_still_stops_the_command(registry):
    registry.mkdir()
    (registry / "moca.json").write_text("{}")
    plant(registry, None, pid=0)
    done = CliRunner().invoke(app, ["serve", "stop"])
    assert done.exit_code != 0 and "field 'pid': refused: pid 0" in str(done.exception)


def test_a_stale_record_is_replaced_by_a_started_server_without_signalling_its_process(tmp_path, registry, bystander):
    backend = create_backend(spec_for(tmp_path))
    key = server_key(backend.server.command, backend.server.port)
    plant(registry, bystander, key=key)
    try:
        answer_all(backend)
        assert backend.lease.owner and bystander.poll() is None
    finally:
        backend.close()


def test_a_server_executable_is_found_on_path_or_named_with_its_install_hint():
    from socialbench.backends.vllm_servers import server_executable
    from socialbench.core.errors import ConfigError, MissingDependency

    assert server_executable("python3 -m http.server", "models.m", "b", "pip install x")[:2] == ["python3", "-m"]
    with pytest.raises(MissingDependency, match=r"backend 'b' needs the `no-such-server-x` executable.*pip install x"):
        server_executable(["no-such-server-x"], "models.m", "b", "pip install x")
    with pytest.raises(ConfigError, match=r"models\.m\.executable is empty"):
        server_executable("", "models.m", "b", "pip install x")
