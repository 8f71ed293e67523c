"""`socialbench cache`: stats, and explanations of misses (from history, and as a dry run)."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from socialbench.cli import app
from socialbench.core.backend import Response
from socialbench.core.cache import RequestCache, cache_key
from socialbench.core.errors import SocialbenchError
from tests.conftest import make_instance
from tests.helpers.moca_requests import moca_request, write_png

IDENTITY = {"backend": "openai_compat", "model_id": "org/model", "revision": "r1"}
GOOD = json.dumps({"mechanism": "expressive aggression", "label": "mock", "subject": "subject0", "target": "target0"})
runner = CliRunner()


def filled_cache(path):
    cache = RequestCache(path)
    for i in range(2):
        req = moca_request(i)
        cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="x", input_tokens=7, output_tokens=2), "qwen")
    return cache


def test_stats_lists_each_model(tmp_path):
    filled_cache(tmp_path / "c.sqlite").close()
    result = runner.invoke(app, ["cache", "stats", "--path", str(tmp_path / "c.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert stats["entries"] == 2 and stats["models"][0]["model"] == "qwen" and stats["models"][0]["input_tokens"] == 14


def test_explain_names_the_changed_part_of_a_recomputed_call(tmp_path):
    cache = filled_cache(tmp_path / "c.sqlite")
    req = moca_request(0)
    newer = {**IDENTITY, "revision": "r2"}
    cache.put(cache_key(newer, req), newer, req, Response(text="y"), "qwen")
    cache.close()
    result = runner.invoke(app, ["cache", "explain", "--path", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 0, result.output
    assert "inst-0000/direct/answer: miss: changed identity" in result.output and "identity.revision" in result.output


def test_dry_run_explains_which_requests_would_be_called(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    img = write_png(tmp_path / "img.png")
    insts = [make_instance(f"i{k}", media=[img.path]) for k in range(3)]
    (tmp_path / "inst.jsonl").write_text("".join(json.dumps(i) + "\n" for i in insts))
    params = {
        "models": {"scripted-model": {"backend": "scripted", "options": {"default": GOOD}}},
        "cache": {"path": str(tmp_path / "c.sqlite")},
        "media": {"allowed_roots": [str(tmp_path)]},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    infer = [
        "infer",
        "--benchmark",
        "moca",
        "--instances",
        "inst.jsonl",
        "--model",
        "scripted-model",
        "--out",
        "p.jsonl",
        "--stats",
        "s.json",
        "--no-progress",
    ]
    assert runner.invoke(app, infer).exit_code == 0
    write_png(tmp_path / "img.png", colour=(0, 0, 255))  # the shared image changes
    (tmp_path / "inst.jsonl").write_text("".join(json.dumps(i) + "\n" for i in insts[:2]))
    explain = ["cache", "explain", "--model", "scripted-model", "--instances", "inst.jsonl"]
    refused = runner.invoke(app, explain)
    assert isinstance(refused.exception, SocialbenchError) and "--benchmark" in str(refused.exception)
    result = runner.invoke(app, [*explain, "--benchmark", "moca"])
    assert result.exit_code == 0, result.output
    assert "2 requests, 0 cached, 2 would be called" in result.output
    assert "misses by changed part: messages=2" in result.output and "image bytes changed" in result.output


@pytest.mark.parametrize("command", [["stats"], ["explain"]])
@pytest.mark.parametrize("content", [b"", b"just some text\n"], ids=["empty", "text"])
def test_stats_and_explain_refuse_a_file_that_is_not_a_cache_and_leave_it_as_it_was(tmp_path, command, content):
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    result = runner.invoke(app, ["cache", *command, "--path", str(path)])
    assert result.exit_code != 0 and isinstance(result.exception, SocialbenchError)
    assert str(path) in str(result.exception) and "not a request cache" in str(result.exception)
    assert path.read_bytes() == content and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("command", [["stats"], ["explain"]])
def test_stats_and_explain_refuse_a_missing_path_and_create_nothing(tmp_path, command):
    path = tmp_path / "nope.sqlite"
    result = runner.invoke(app, ["cache", *command, "--path", str(path)])
    assert result.exit_code != 0 and str(path) in str(result.exception) and "no request cache" in str(result.exception)
    assert list(tmp_path.iterdir()) == []


def test_stats_of_a_closed_cache_leave_no_wal_shm_or_lock_files(tmp_path):
    filled_cache(tmp_path / "c.sqlite").close()
    for extra in tmp_path.glob("c.sqlite?*"):
        extra.unlink()
    result = runner.invoke(app, ["cache", "stats", "--path", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite"]


# ---- the shared PostgreSQL store (SOCIALBENCH_CACHE_URL) ---------------------------------------------
STORE_URL = "postgresql://cache:s3cret@db.example:5432/cache"


def test_the_store_named_by_the_environment_is_inspected_instead_of_the_params_file(tmp_path, monkeypatch):
    from socialbench.core.cache_pg import PostgresRequestCache

    filled_cache(tmp_path / "stand-in.sqlite").close()  # stands in for the PostgreSQL store
    opened = []
    monkeypatch.setattr(
        PostgresRequestCache,
        "open_readonly",
        classmethod(lambda cls, url: opened.append(url) or RequestCache.open_readonly(tmp_path / "stand-in.sqlite")),
    )
    monkeypatch.setenv("SOCIALBENCH_CACHE_URL", STORE_URL)
    monkeypatch.chdir(tmp_path)  # no params.yaml: the default file would not exist
    result = runner.invoke(app, ["cache", "stats", "--json"])
    assert result.exit_code == 0, result.output
    assert opened == [STORE_URL] and json.loads(result.output)["entries"] == 2


def test_path_names_a_sqlite_file_even_with_a_store_in_the_environment(tmp_path, monkeypatch):
    filled_cache(tmp_path / "c.sqlite").close()
    monkeypatch.setenv("SOCIALBENCH_CACHE_URL", STORE_URL)  # unreachable: opening it would fail
    result = runner.invoke(app, ["cache", "stats", "--path", str(tmp_path / "c.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["path"] == str(tmp_path / "c.sqlite")


@pytest.fixture(scope="module")
def pg_cluster():
    from tests.helpers.postgres import postgres_cluster

    return postgres_cluster()


@pytest.mark.postgres
def test_stats_and_explain_read_the_postgresql_store_and_never_show_its_password(pg_cluster, monkeypatch):
    from socialbench.core.cache_pg import PostgresRequestCache

    url = pg_cluster.url("inspect_tests")
    cache = PostgresRequestCache(url)
    cache._conn().execute("TRUNCATE calls, claims")
    for i in range(2):
        req = moca_request(i)
        cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="x", input_tokens=7, output_tokens=2), "qwen")
    newer = {**IDENTITY, "revision": "r2"}
    cache.put(cache_key(newer, moca_request(0)), newer, moca_request(0), Response(text="y"), "qwen")
    cache.close()
    monkeypatch.setenv("SOCIALBENCH_CACHE_URL", url)
    stats = runner.invoke(app, ["cache", "stats", "--json"])
    explain = runner.invoke(app, ["cache", "explain"])
    assert stats.exit_code == 0 and explain.exit_code == 0, stats.output + explain.output
    assert json.loads(stats.output)["entries"] == 3 and json.loads(stats.output)["models"][0]["input_tokens"] == 14
    assert "inst-0000/direct/answer: miss: changed identity" in explain.output
    assert pg_cluster.password not in stats.output + explain.output


@pytest.mark.postgres
def test_inspecting_a_database_without_a_cache_says_so_and_creates_no_table(pg_cluster, monkeypatch):
    import psycopg

    url = pg_cluster.url("inspect_empty")
    monkeypatch.setenv("SOCIALBENCH_CACHE_URL", url)
    result = runner.invoke(app, ["cache", "stats"])
    assert result.exit_code != 0 and "no request cache here yet" in str(result.exception)
    assert pg_cluster.password not in str(result.exception)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('calls')").fetchone()[0] is None


# ---- entries of a model params do not have (issue 33, point 9) --------------------------------------------
def _params_with(tmp_path, *models):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"models": {m: {"backend": "random"} for m in models}}))
    return params


def test_stats_says_which_models_with_entries_are_not_in_params(tmp_path):
    filled_cache(tmp_path / "c.sqlite").close()
    params = _params_with(tmp_path, "llava")
    args = ["cache", "stats", "--path", str(tmp_path / "c.sqlite"), "--params", str(params)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "(not in params)" in result.output and f"not in {params} (models:): qwen;" in result.output
    as_json = json.loads(runner.invoke(app, [*args, "--json"]).output)
    assert as_json["models"][0]["in_params"] is False


def test_stats_marks_nothing_when_every_model_is_in_params(tmp_path):
    filled_cache(tmp_path / "c.sqlite").close()
    params = _params_with(tmp_path, "qwen")
    result = runner.invoke(app, ["cache", "stats", "--path", str(tmp_path / "c.sqlite"), "--params", str(params)])
    assert result.exit_code == 0 and "not in params" not in result.output


def test_explain_says_a_recomputed_model_is_not_in_params(tmp_path):
    cache = filled_cache(tmp_path / "c.sqlite")
    req = moca_request(0)
    newer = {**IDENTITY, "revision": "r2"}
    cache.put(cache_key(newer, req), newer, req, Response(text="y"), "qwen")
    cache.close()
    params = _params_with(tmp_path, "llava")
    result = runner.invoke(app, ["cache", "explain", "--path", str(tmp_path / "c.sqlite"), "--params", str(params)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].startswith(f"not in {params} (models:): qwen;")


def test_explain_of_a_request_for_a_model_not_in_params_says_so(tmp_path):
    filled_cache(tmp_path / "c.sqlite").close()
    params = _params_with(tmp_path, "llava")
    args = ["cache", "explain", "nope/direct/answer", "--model", "gone", "--path", str(tmp_path / "c.sqlite")]
    result = runner.invoke(app, [*args, "--params", str(params)])
    assert isinstance(result.exception, SocialbenchError) and f"(gone is not in {params})" in str(result.exception)
