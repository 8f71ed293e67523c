"""``socialbench book`` (src/socialbench/stages/book.py): the options given once per benchmark, and the
tracking store opened only after every table is read. What goes in the PDF (results/book.py) is tested
in tests/results/test_book.py, through this command too."""

import socket
import time

from socialbench.cli import app
from socialbench.core.errors import ConfigError
from tests.stages.conftest import runner


def book_inputs(tmp_path, repo_root):
    """The options of a one-benchmark book over a tables folder holding one table (no tracking store)."""
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "acc.csv").write_text("model,method,metric,value\ntoy_model,direct,acc,42.5\n")
    (tmp_path / "test.jsonl").write_text('{"id": "toy-1"}\n')
    (tmp_path / "toy.json").write_text('{"evaluations": [], "keys": []}\n')
    return [
        "book",
        "--benchmark",
        "meetingtom",
        "--tables-dir",
        str(tables),
        "--instances",
        str(tmp_path / "test.jsonl"),
        "--tracked",
        str(tmp_path / "toy.json"),
        "--params",
        str(repo_root / "params.yaml"),
        "--out",
        str(tmp_path / "book" / "book.pdf"),
    ]


def test_options_not_given_once_per_benchmark_are_refused_counting_each(tmp_path, repo_root):
    res = runner.invoke(app, [*book_inputs(tmp_path, repo_root), "--benchmark", "moca"])
    assert isinstance(res.exception, ConfigError), res.output
    assert "once per --benchmark" in str(res.exception) and "(got 2 benchmark(s), 1 tables folder(s)" in str(
        res.exception
    )
    assert not (tmp_path / "book").exists()


def test_a_tables_rule_not_given_once_per_benchmark_is_refused(tmp_path, repo_root):
    args = [*book_inputs(tmp_path, repo_root), "--tables-rule", "a_tables", "--tables-rule", "b_tables"]
    res = runner.invoke(app, args)
    assert isinstance(res.exception, ConfigError), res.output
    assert "--tables-rule once per --benchmark" in str(res.exception)
    assert not (tmp_path / "book").exists()


def test_a_benchmark_given_twice_is_refused(tmp_path, repo_root):
    args = book_inputs(tmp_path, repo_root)
    twice = [*args, "--benchmark", "meetingtom"]
    for option in ("--tables-dir", "--instances", "--tracked"):
        twice += [option, args[args.index(option) + 1]]
    res = runner.invoke(app, twice)
    assert isinstance(res.exception, ConfigError) and "a --benchmark is given twice" in str(res.exception)


def test_the_book_on_a_tracking_server_at_a_closed_port_fails_within_seconds_naming_it_redacted(
    tmp_path, repo_root, monkeypatch
):
    with socket.socket() as s:  # a port nobody listens on: bound, then closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://user:hunter2@127.0.0.1:{port}")
    started = time.monotonic()
    res = runner.invoke(app, book_inputs(tmp_path, repo_root))
    assert time.monotonic() - started < 10
    assert isinstance(res.exception, ConfigError), res.output
    message = str(res.exception)
    assert f"MLflow tracking store http://***@127.0.0.1:{port}: cannot connect" in message
    assert "hunter2" not in message and "\n" not in message
    assert not (tmp_path / "book").exists()
