"""The pipeline's end stops the model servers it kept (rules/infer.smk onsuccess, backends.vllm_servers):
a copy of the workflow runs one cheap job with a registry holding an idle server and one in use."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from socialbench.core.processes import process_started

REPO = Path(__file__).resolve().parents[1]


def plant(registry: Path, key: str, started_in: Path, users: list[str]) -> subprocess.Popen:
    """A stand-in server process (TEST DOUBLE tests/helpers/fake_vllm_serve.py, in its own session, as
    vllm serve is started) and its record: only a model server's command line is ever stopped."""
    from socialbench.backends.vllm_backend import free_port

    port = free_port()
    command = [sys.executable, str(REPO / "tests" / "helpers" / "fake_vllm_serve.py"), "serve", key]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    record = {
        "key": key,
        "model": key,
        "pid": proc.pid,
        "pid_started": process_started(proc.pid),
        "port": port,
        "command": command,
        "started_in": str(started_in),
        "users": users,
    }
    (registry / f"{key}.json").write_text(json.dumps(record))
    return proc


@pytest.mark.slow
def test_a_finished_pipeline_stops_its_idle_servers_and_leaves_those_in_use(tmp_path):
    work, registry = tmp_path / "work", tmp_path / "servers"
    work.mkdir()
    registry.mkdir()
    for name in ("Snakefile", "params.yaml", "dvc.yaml"):
        shutil.copy2(REPO / name, work / name)
    for folder in ("rules", "report", "envs"):
        shutil.copytree(REPO / folder, work / folder)
    (work / "src").symlink_to(REPO / "src")
    idle = plant(registry, "idle", work, [])
    in_use = plant(registry, "in-use", work, [f"{os.getpid()}:{process_started(os.getpid())}:t"])
    try:
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "SOCIALBENCH_SERVER_DIR": str(registry),
        }
        done = subprocess.run(
            ["snakemake", "--cores", "1", "moca_demo_data"], cwd=work, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert idle.wait(timeout=30) is not None and not (registry / "idle.json").exists()
        assert in_use.poll() is None and (registry / "in-use.json").exists()
    finally:
        for proc in (idle, in_use):
            proc.kill()
            proc.wait()
