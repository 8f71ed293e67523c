"""Bad input: servers, caches and stores (docs/bad-input.md, classes "dead server", "server
registry", "process control", "waits", "no traceback"): a server nobody runs, the registry of
shared model servers, bounded waits, a damaged or foreign request cache or store."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from tests.bad_input.cases import (
    PARAMS,
    Case,
    book_on,
    infer,
    jsonl,
    run_case,
    run_ok,
    run_with,
    snapshot,
    stored_cache,
    write,
)
from tests.conftest import make_instance


def dead_server(root: Path) -> list[str]:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write(
        "dead.yaml",
        PARAMS + f"  down:\n    backend: openai_compat\n    model_id: m\n"
        f"    options: {{base_url: 'http://127.0.0.1:{port}/v1', retry_base_delay_s: 0.01}}\n",
    )
    write("data/many.jsonl", jsonl([make_instance(f"n{k}", media=["data/raw/img.png"]) for k in range(12)]))
    return [
        "infer",
        "--benchmark",
        "moca",
        "--instances",
        "data/many.jsonl",
        "--model",
        "down",
        "--params",
        "dead.yaml",
        "--out",
        "results/o.jsonl",
        "--stats",
        "results/o.stats.json",
    ]


# ---- serve: the node's registry of shared model servers ------------------------------------------------
def server_record(text: str):
    return lambda root: write("reg/abc.json", text) and None


def sql(path: str, statement: str) -> None:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute(statement)
    conn.commit()
    conn.close()


def damaged_page(root: Path) -> None:
    stored_cache("c.sqlite", n=60, text="x" * 2000)
    data = bytearray(Path("c.sqlite").read_bytes())
    data[4096 * 5 : 4096 * 9] = b"\xff" * (4096 * 4)  # table pages, not the schema on page 1
    Path("c.sqlite").write_bytes(bytes(data))


def cache_edit(statement: str):
    def prep(root: Path) -> None:
        stored_cache("c.sqlite")
        sql("c.sqlite", statement)

    return prep


def foreign_calls(path: str):
    def prep(root: Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        sql(path, "CREATE TABLE calls (id INTEGER PRIMARY KEY, who TEXT)")

    return prep


# ---- issue 33, class 1: process control (only a proven server is signalled; docs/security.md) --------------
def record_with(**fields):
    """A registry record of key ``abc`` with ``fields`` over a well-formed stand-in."""

    def prep(root: Path) -> None:
        record = {"key": "abc", "pid": 4242, "pid_started": "1", "port": 5, "command": ["vllm", "serve", "m"]}
        write("reg/abc.json", json.dumps({**record, **{k: v() if callable(v) else v for k, v in fields.items()}}))

    return prep


# ---- issue 33, class 5: waits (every wait bounded by params; a closed port fails in seconds) ---------------
def closed_port() -> int:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def web_search_answering(fault, **options):
    """infer CoDAR with a model whose entities are looked up by the web retriever at a loopback search
    server (TEST DOUBLE, tests/helpers/brave_loopback.py) that answers every search with ``fault``."""

    def setup(root: Path) -> list[str]:
        from tests.helpers.brave_loopback import BraveServer

        server = BraveServer(token="k", faults=[fault] * 100).__enter__()  # a daemon thread, for the case
        os.environ["SB_BAD_INPUT_BRAVE_KEY"] = "k"
        opts = {"api_key_env": "SB_BAD_INPUT_BRAVE_KEY", "base_url": server.url, "max_retries": 0, **options}
        write(
            "web.yaml",
            PARAMS.replace(
                "moca: {frames: 2}", f"moca: {{frames: 2, retrieval: {{retriever: web, options: {json.dumps(opts)}}}}}"
            )
            + "  w: {backend: codar_script, options: {entities: text, route: hybrid}}\n",
        )
        return [
            "infer",
            "--benchmark",
            "moca",
            "--instances",
            "data/i.jsonl",
            "--model",
            "w",
            "--method",
            "codar",
            "--params",
            "web.yaml",
            "--out",
            "results/o.jsonl",
            "--stats",
            "results/o.stats.json",
        ]

    return setup


def _fault(status: int, **headers: str):
    from tests.helpers.brave_loopback import Fault

    return Fault(status=status, headers=headers)


# ---- issue 38: bad input that the workspace rule hid, or that reached no check of its own ------------------
def with_model_v(argv: list[str]) -> list[str]:
    return [("v" if a == "random" else a) for a in argv]


CASES = [
    # -- a server that cannot be used ----------------------------------------------------------------------------
    Case(
        "infer-dead-server",
        "dead server",
        dead_server,
        "models.down: stopped after 5 failed attempts in a row",
        cache=True,
    ),
    Case(
        "serve-list-dir-is-a-file",
        "server registry",
        run_with(["serve", "list", "--dir", "reg"], lambda root: write("reg", "x") and None),
        "reg: is a file, not a folder of server records (--dir takes a folder)",
    ),
    Case(
        "serve-list-record-cut-short",
        "server registry",
        run_with(["serve", "list", "--dir", "reg"], server_record('{"pid": 1, "port"')),
        "reg/abc.json: is not a server record (cut short, or not a JSON object)",
    ),
    Case(
        "serve-stop-pid-not-a-number",
        "server registry",
        run_with(["serve", "stop", "--dir", "reg"], server_record('{"key": "abc", "pid": "x", "port": 5}')),
        "reg/abc.json, field 'pid': expected int, got 'x'",
    ),
    Case(
        "serve-stop-dir-is-a-file",
        "server registry",
        run_with(["serve", "stop", "--dir", "reg"], lambda root: write("reg", "x") and None),
        "reg: is a file, not a folder of server records",
    ),
    Case(  # issue 38: other programs' JSON files are left alone, a refused record beside them still stops it
        "serve-stop-refused-record-among-other-json-files",
        "server registry",
        run_with(
            ["serve", "stop", "--dir", "results/mlflow"],
            lambda root: (
                (
                    write("results/mlflow/moca.json", '{"new": [], "existing": [], "parent": null}'),
                    write("results/mlflow/abc.json", '{"key": "abc", "pid": -1, "port": 5}'),
                )
                and None
            ),
        ),
        "results/mlflow/abc.json, field 'pid': refused: pid -1",
    ),
    Case(
        "serve-stop-record-not-an-object",
        "server registry",
        run_with(["serve", "stop", "--force", "--dir", "reg"], server_record("[1, 2]")),
        "reg/abc.json: is not a server record (cut short, or not a JSON object)",
    ),
    Case(
        "cache-stats-damaged-page",
        "no traceback",
        run_with(["cache", "stats", "--path", "c.sqlite"], damaged_page),
        "c.sqlite: the request cache cannot be read (database disk image is malformed)",
    ),
    Case(
        "cache-stats-blob-model",
        "no traceback",
        run_with(["cache", "stats", "--path", "c.sqlite"], cache_edit("UPDATE calls SET model = CAST(model AS BLOB)")),
        "field 'model': holds a BLOB where the request cache keeps text",
    ),
    Case(
        "cache-explain-key-parts-not-json",
        "no traceback",
        run_with(
            ["cache", "explain", "inst-0000/direct/answer", "--path", "c.sqlite"],
            cache_edit("UPDATE calls SET key_parts = '{cut'"),
        ),
        "field 'key_parts': is not JSON",
    ),
    Case(
        "cache-explain-damaged-page",
        "no traceback",
        run_with(["cache", "explain", "--path", "c.sqlite"], damaged_page),
        "c.sqlite: the request cache cannot be read (",
    ),
    Case(
        "cache-stats-foreign-calls-table",
        "no traceback",
        run_with(["cache", "stats", "--path", "app.db"], foreign_calls("app.db")),
        "app.db: is an SQLite database but not a request cache (its 'calls' table lacks",
    ),
    Case(
        "infer-cache-a-foreign-calls-table",
        "no traceback",
        run_with(infer("data/i.jsonl"), foreign_calls(".cache/requests.sqlite")),
        ".cache/requests.sqlite: is an SQLite database but not a request cache",
    ),
    Case(
        "cache-stats-store-url-port-not-a-number",
        "no traceback",
        run_with(["cache", "stats"]),
        "SOCIALBENCH_CACHE_URL: postgresql://***@db:54x2/c: its port '54x2' is not a number",
        env=(("SOCIALBENCH_CACHE_URL", "postgresql://u:hunter2@db:54x2/c"),),
    ),
    Case(
        "serve-stop-pid-zero",
        "process control",
        run_with(["serve", "stop", "--force", "--dir", "reg"], record_with(pid=0)),
        "reg/abc.json, field 'pid': refused: pid 0 is no process a record may name",
    ),
    Case(
        "serve-stop-pid-minus-one",
        "process control",
        run_with(["serve", "stop", "--dir", "reg"], record_with(pid=-1)),
        "reg/abc.json, field 'pid': refused: pid -1 is no process a record may name",
    ),
    Case(
        "serve-stop-pid-impossible",
        "process control",
        run_with(["serve", "stop", "--dir", "reg"], record_with(pid=2**40)),
        "field 'pid': refused: pid 1099511627776 is above this host's largest process id",
    ),
    Case(
        "serve-stop-pid-is-the-caller",
        "process control",
        run_with(["serve", "stop", "--force", "--dir", "reg"], record_with(pid=os.getpid)),
        "is this process; nothing was signalled",
    ),
    Case(
        "serve-stop-pid-is-the-callers-group",
        "process control",
        run_with(["serve", "stop", "--force", "--dir", "reg"], record_with(pid=os.getpgrp)),
        "is in this process's own process group",
    ),
    Case(
        "serve-stop-key-is-a-path",
        "process control",
        run_with(["serve", "stop", "--force", "--dir", "reg"], record_with(key="../escape")),
        "reg/abc.json, field 'key': '../escape' is not this record's file name 'abc' (record keys are names",
    ),
    Case(
        "serve-list-pid-zero",
        "process control",
        run_with(["serve", "list", "--dir", "reg"], record_with(pid=0)),
        "reg/abc.json, field 'pid': refused",
    ),
    Case(
        "book-tracking-server-closed-port",
        "waits",
        lambda root: book_on(f"http://127.0.0.1:{closed_port()}")(root),
        "cannot connect to 127.0.0.1:",
    ),
    Case(
        "book-postgresql-store-closed-port",
        "waits",
        lambda root: book_on(f"postgresql+psycopg://127.0.0.1:{closed_port()}/m")(root),
        "MLflow tracking store postgresql+psycopg://127.0.0.1:",
    ),
    Case(
        "infer-web-search-retry-after-3600",
        "waits",
        web_search_answering(_fault(429, **{"Retry-After": "3600"})),
        "asks to wait 3600 s (Retry-After), longer than moca.retrieval.options.max_wait_s (60 s)",
        outputs=(".cache",),  # the model's calls before the search stay cached, as before a dead server
    ),
    Case(
        "infer-every-web-search-fails",
        "waits",
        web_search_answering(_fault(500), max_consecutive_failures=2),
        "retriever web: stopped after 2 failed searches in a row",
        outputs=(".cache",),
    ),
    Case(
        "book-tracking-uri-in-the-environment-ftp",
        "no traceback",
        book_on("sqlite:///mlflow.db"),
        "MLFLOW_TRACKING_URI: 'ftp://h/store': MLflow has no tracking store for the scheme 'ftp'",
        env=(("MLFLOW_TRACKING_URI", "ftp://h/store"),),
    ),
    Case(
        "infer-server-url-in-the-environment-not-a-url",
        "dead server",
        run_with(
            [*with_model_v(infer("data/i.jsonl")), "--method", "direct"],
            lambda root: write("params.yaml", PARAMS + "  v: {backend: vllm, model_id: org/m}\n") and None,
        ),
        "$SOCIALBENCH_SERVER_URL_V: 'not-a-url' is not a server URL (expected http://HOST:PORT/v1",
        cache=True,
        env=(("SOCIALBENCH_SERVER_URL_V", "not-a-url"),),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing_outside_its_outputs(case, ws, capsys, monkeypatch):
    run_case(case, ws, capsys, monkeypatch)


def test_serve_stop_on_a_folder_of_other_json_files_names_them_and_changes_nothing(ws, capsys, monkeypatch):
    write("results/mlflow/moca.json", '{"new": [], "existing": ["r1"], "parent": null}')
    write("results/mlflow/meetingtom.json", "{}")
    before = snapshot(ws)
    err = run_ok(["serve", "stop", "--dir", "results/mlflow"], capsys, monkeypatch)
    assert err.strip() == "note: results/mlflow: not server records, left alone: meetingtom.json, moca.json"
    assert snapshot(ws) == before
