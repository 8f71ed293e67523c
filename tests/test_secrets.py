"""Issue 33, class 2: a sentinel secret planted in every URL and key the project reads never reaches an
output. Each command that takes them runs (a subprocess with the planted environment, against closed
loopback ports: nothing is reached), and every output stream and every file written under the working
folder is searched for the sentinel. docs/security.md, "Secrets"."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import make_instance

REPO = Path(__file__).resolve().parents[1]
SENTINEL = "sb-sentinel-7f3a"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when this returns: nothing listens there


def planted_environment() -> dict[str, str]:
    """Every URL and key the project reads, each holding the sentinel (user info, ?password=, ?token=)."""
    port = closed_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOCIALBENCH_", "MLFLOW_"))}
    env.update(
        {
            "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{REPO}",
            "SOCIALBENCH_SERVER_URL_SRV": f"http://bob:{SENTINEL}-pw@127.0.0.1:{port}/v1?token={SENTINEL}-tok",
            "SOCIALBENCH_CACHE_URL": f"postgresql://bob:{SENTINEL}-pw@127.0.0.1:{port}/c?password={SENTINEL}-q",
            "MLFLOW_TRACKING_URI": f"http://bob:{SENTINEL}-pw@127.0.0.1:{port}/?token={SENTINEL}-tok",
            "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
            "MLFLOW_HTTP_REQUEST_TIMEOUT": "3",
            "MLFLOW_DISABLE_TELEMETRY": "true",
            "VLLM_API_KEY": f"{SENTINEL}-vllm",
            "OPENAI_API_KEY": f"{SENTINEL}-openai",
            "ANTHROPIC_API_KEY": f"{SENTINEL}-anthropic",
            "BRAVE_SEARCH_API_KEY": f"{SENTINEL}-brave",
            "HF_TOKEN": f"{SENTINEL}-hf",
        }
    )
    return env


PARAMS = """seed: 1
moca: {frames: 2}
media: {frame_max_side: 64}
cache: {path: .cache/requests.sqlite}
mlflow: {tracking_uri: "sqlite:///mlflow.db"}
models:
  srv: {backend: vllm, model_id: m, options: {max_retries: 0, max_consecutive_failures: 1, timeout: 3}}
  random: {backend: random}
"""


@pytest.fixture
def work(tmp_path) -> Path:
    from tests.helpers.moca_requests import write_png

    (tmp_path / "data" / "raw").mkdir(parents=True)
    write_png(tmp_path / "data" / "raw" / "img.png")
    inst = [make_instance(f"i{k}", media=["data/raw/img.png"]) for k in range(2)]
    (tmp_path / "data" / "i.jsonl").write_text("".join(json.dumps(i) + "\n" for i in inst))
    (tmp_path / "params.yaml").write_text(PARAMS)
    (tmp_path / "params-uri.yaml").write_text(
        PARAMS.replace("sqlite:///mlflow.db", f"postgresql://db.example/mlflow?password={SENTINEL}-params")
    )
    web = f"https://bob:{SENTINEL}-pw@gateway.example/search?token={SENTINEL}-tok"
    (tmp_path / "params-web.yaml").write_text(
        PARAMS.replace(
            "moca: {frames: 2}",
            f'moca: {{frames: 2, retrieval: {{retriever: web, k: 3, options: {{base_url: "{web}"}}}}}}',
        )
    )
    return tmp_path


def infer(model: str, *extra: str) -> list[str]:
    return ["infer", "--benchmark", "moca", "--instances", "data/i.jsonl", "--model", model, "--no-progress", *extra]


#: Each command that takes a URL or key of the environment or params, and what it must have done.
COMMANDS = {
    "infer-server-url": infer("srv", "--out", "results/o.jsonl", "--stats", "results/o.stats.json"),
    "infer-cache-url": infer("random", "--out", "results/r.jsonl", "--stats", "results/r.stats.json"),
    "infer-web-retriever": infer(
        "random", "--method", "codar", "--params", "params-web.yaml", "--out", "results/w.jsonl"
    ),
    "cache-stats": ["cache", "stats"],
    "cache-explain": ["cache", "explain", "--model", "srv"],
    "check-params-uri": ["check-params", "--params", "params-uri.yaml"],
    "check-params": ["check-params"],
    "serve-list": ["serve", "list"],
}


def written(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_sentinel_secret_in_every_url_and_key_reaches_no_output(name, work):
    env = planted_environment()
    if name == "infer-server-url" or name.startswith(("check-params", "serve")):
        env.pop("SOCIALBENCH_CACHE_URL")  # so the run gets as far as the server (a SQLite cache)
    if name == "serve-list":
        env["SOCIALBENCH_SERVER_DIR"] = str(work / "servers")
    done = subprocess.run(
        [sys.executable, "-m", "socialbench", *COMMANDS[name]],
        cwd=work,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert SENTINEL.encode() not in done.stdout, done.stdout.decode(errors="replace")[-2000:]
    assert SENTINEL.encode() not in done.stderr, done.stderr.decode(errors="replace")[-2000:]
    planted = {"params-uri.yaml", "params-web.yaml"}  # the params that hold it on purpose
    leaked = sorted(p for p, data in written(work).items() if SENTINEL.encode() in data and p not in planted)
    assert leaked == [], leaked
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-2000:]
    if name not in ("check-params", "serve-list"):  # each of the others is refused, naming what without it
        assert done.returncode == 2 and done.stderr.startswith(b"error: "), done.stderr[-2000:]
