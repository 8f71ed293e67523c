"""The request cache's stores (src/socialbench/core/cache_pg.py chooses the store and implements the
PostgreSQL one): the same contract in SQLite (default) and PostgreSQL (many nodes), and two pipelines
sharing the PostgreSQL store at once repeating no call, one in flight included."""

from __future__ import annotations

import multiprocessing
import socket
import subprocess
import sys
import threading
import time

import pytest

from socialbench.core.backend import ModelSpec, Response, create_backend
from socialbench.core.cache import RequestCache, cache_key
from socialbench.core.cache_pg import CACHE_URL_ENV, POSTGRES_SQL, PostgresRequestCache, open_request_cache
from socialbench.core.errors import DataError, SocialbenchError
from tests.helpers.loopback import LoopbackServer
from tests.helpers.moca_requests import moca_request, run_through_cache
from tests.helpers.postgres import postgres_cluster

IDENTITY = {"backend": "openai_compat", "model_id": "org/model", "revision": "r1"}


@pytest.fixture(scope="module")
def pg_url():
    return postgres_cluster().url("cache_tests")


@pytest.fixture
def pg_cache(pg_url):
    c = PostgresRequestCache(pg_url)
    c._conn().execute("TRUNCATE calls, claims")
    yield c
    c.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    if request.param == "sqlite":
        c = RequestCache(tmp_path / "c.sqlite")
        yield c
        c.close()
    else:
        yield request.getfixturevalue("pg_cache")


# ---- pure parts ------------------------------------------------------------------------------------
def test_a_replaced_row_is_an_upsert_on_the_key_that_updates_every_other_column():
    for sql in (POSTGRES_SQL.put_call, POSTGRES_SQL.put_record, POSTGRES_SQL.put_claim):
        columns = [c.strip() for c in sql.split("(", 1)[1].split(")", 1)[0].split(",")]
        updated = sql.split("ON CONFLICT (key) DO UPDATE SET ", 1)[1]
        assert [c for c in columns if c != "key"] == [u.split(" = ")[0] for u in updated.split(", ")]


def test_no_url_in_the_environment_keeps_the_sqlite_file(tmp_path):
    c = open_request_cache(tmp_path / "c.sqlite", environ={})
    assert type(c) is RequestCache and (tmp_path / "c.sqlite").is_file()
    c.close()


def test_a_url_that_is_not_postgresql_is_refused_without_echoing_it(tmp_path):
    with pytest.raises(SocialbenchError, match=CACHE_URL_ENV) as err:
        open_request_cache(tmp_path / "c.sqlite", environ={CACHE_URL_ENV: "mysql://u:hunter2@h/d"})
    assert "hunter2" not in str(err.value)


# ---- the contract, in both stores -------------------------------------------------------------------
def test_a_store_on_a_closed_port_fails_within_seconds_naming_it_redacted():
    from socialbench.core.errors import DataError

    with socket.socket() as s:  # a port nobody listens on: bound, then closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(DataError) as err:
        PostgresRequestCache(f"postgresql://user:hunter2@127.0.0.1:{port}/db", connect_timeout_s=2)
    assert time.monotonic() - started < 10
    message = str(err.value)
    assert message.startswith(
        f"postgresql://***@127.0.0.1:{port}/db: cannot connect to the request cache store within 2 s"
    )
    assert "hunter2" not in message and "waits.connect_s" in message


def test_a_stored_answer_is_read_back_with_its_counts_and_finish_reason(store):
    req = moca_request(0)
    key = cache_key(IDENTITY, req)
    assert store.get(key) is None
    store.put(key, IDENTITY, req, Response(text="a", input_tokens=3, output_tokens=2, finish_reason="length"), "m")
    hit = store.get(key)
    assert (hit.text, hit.input_tokens, hit.output_tokens, hit.finish_reason, hit.cached) == ("a", 3, 2, "length", True)


def test_a_failed_call_is_not_stored(store):
    req = moca_request(0)
    key = cache_key(IDENTITY, req)
    store.put(key, IDENTITY, req, Response(text="", error="boom"), "m")
    assert store.get(key) is None


def test_a_second_answer_under_one_key_replaces_the_first(store):
    req = moca_request(0)
    key = cache_key(IDENTITY, req)
    store.put(key, IDENTITY, req, Response(text="old"), "m")
    store.put(key, IDENTITY, req, Response(text="new"), "m")
    assert store.get(key).text == "new" and store.stats()["entries"] == 1


def test_records_hits_and_stats_are_kept(store):
    store.put_record("k1", {"q": 1}, "found", backend="retriever", model="r", request_id="q1")
    store.get("k1")
    store.get("k1")
    stats = store.stats()
    assert stats["entries"] == 1 and stats["hits_served"] == 2 and stats["size_bytes"] > 0


def test_a_changed_part_of_the_key_is_explained(store):
    req = moca_request(0)
    store.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="a"), "m")
    why = store.explain_miss({**IDENTITY, "revision": "r2"}, req, "m")
    assert not why.hit and why.parts == ["identity"]


# ---- two pipelines on one PostgreSQL store ----------------------------------------------------------
def _share_run(url, server_url, n, barrier, results):
    barrier.wait()  # both pipelines start at the same moment
    try:
        spec = ModelSpec(
            name="m", backend="openai_compat", model_id="served", concurrency=4, options={"base_url": server_url}
        )
        out, called = run_through_cache(
            create_backend(spec), [moca_request(i) for i in range(n)], PostgresRequestCache(url)
        )
        results.put((called, [r.text for r in out], [r.error for r in out]))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        results.put(repr(exc))


@pytest.mark.postgres
def test_two_processes_sharing_the_postgresql_store_make_each_call_once(pg_cache, pg_url):
    n = 12
    ctx = multiprocessing.get_context("spawn")  # no forked psycopg connection
    with LoopbackServer("openai", latency_s=0.3) as srv:  # slow: the second run starts while calls are in flight
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_share_run, args=(pg_url, srv.url, n, barrier, results)) for _ in range(2)]
        for p in procs:
            p.start()
        got = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(30)
        seen = [str(r.body["messages"][1]) for r in srv.completions()]
    assert all(isinstance(g, tuple) for g in got), got
    assert len(seen) == n == len(set(seen))  # each distinct request reached the server once
    assert got[0][0] + got[1][0] == n and got[0][1] == got[1][1] and not any(e for g in got for e in g[2])
    assert (
        pg_cache.stats()["entries"] == n and pg_cache._conn().execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    )


@pytest.mark.postgres
def test_a_claim_made_while_another_writer_is_claiming_the_same_key_sees_its_claim(pg_cache, pg_url):
    other = PostgresRequestCache(pg_url)
    claimant = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # the other pipeline
    try:
        conn = other._conn()
        other._begin(conn)  # the other pipeline is claiming "k" right now, not yet committed
        conn.execute(
            "INSERT INTO claims(key, owner, host, pid, pid_started, claimed_at) VALUES (%s,%s,%s,%s,NULL,%s)",
            ("k", f"other:{claimant.pid}", socket.gethostname(), claimant.pid, time.time()),
        )
        got = {}
        here = threading.Thread(target=lambda: got.update(result=pg_cache._claim(["k"])))
        here.start()
        time.sleep(0.5)
        conn.execute("COMMIT")
        here.join(10)
    finally:
        claimant.kill()
        claimant.wait()
        other.close()
    mine, stored, theirs = got["result"]
    assert mine == set() and set(theirs) == {"k"}  # it waited for the claim to commit, then left the call to it


@pytest.mark.postgres
def test_a_call_in_flight_in_another_pipeline_is_waited_for_not_made_again(pg_cache, pg_url):
    spec = ModelSpec(name="m", backend="openai_compat", model_id="served", options={"base_url": "http://127.0.0.1:9"})
    backend = create_backend(spec)  # nothing listens there: a call made here would fail
    req = moca_request(0)
    key = cache_key(backend.identity(), req)
    claimant = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # the other pipeline
    try:
        pg_cache._conn().execute(
            "INSERT INTO claims(key, owner, host, pid, pid_started, claimed_at) VALUES (%s,%s,%s,%s,NULL,%s)",
            (key, f"other:{claimant.pid}", socket.gethostname(), claimant.pid, time.time()),
        )

        def claimant_finishes():  # the other pipeline stores its answer a moment later
            time.sleep(0.5)
            other = PostgresRequestCache(pg_url)
            other.put(key, backend.identity(), req, Response(text='{"from": "the other run"}'), "m")
            other.close()

        threading.Thread(target=claimant_finishes).start()
        out, called = run_through_cache(backend, [req], pg_cache)
    finally:
        claimant.kill()
        claimant.wait()
    assert called == 0 and out[0].text == '{"from": "the other run"}' and out[0].cached


@pytest.mark.postgres
def test_claims_are_renewed_while_their_calls_are_made(pg_cache):
    pg_cache.heartbeat_s = 0.1
    seen = []

    def slow_call(indices):  # a call that outlives several heartbeats
        first = pg_cache._conn().execute("SELECT claimed_at FROM claims WHERE key = 'k'").fetchone()[0]
        time.sleep(0.5)
        seen.append((first, pg_cache._conn().execute("SELECT claimed_at FROM claims WHERE key = 'k'").fetchone()[0]))

    pg_cache.share_calls(["k"], slow_call, lambda i, r: None)
    assert seen and seen[0][1] > seen[0][0]


@pytest.mark.postgres
@pytest.mark.parametrize("age_s, taken_over", [(30, False), (PostgresRequestCache.claim_ttl_s + 30, True)])
def test_another_nodes_claim_is_taken_over_only_once_its_heartbeat_is_stale(pg_cache, age_s, taken_over):
    pg_cache._conn().execute(
        "INSERT INTO claims(key, owner, host, pid, pid_started, claimed_at) VALUES (%s,%s,%s,%s,NULL,%s)",
        ("k", "node2:1:x", "node2", 1, time.time() - age_s),
    )
    mine, _, theirs = pg_cache._claim(["k"])
    assert (mine == {"k"}) is taken_over and (set(theirs) == {"k"}) is not taken_over


@pytest.mark.postgres
def test_closing_the_store_closes_the_connection_of_every_thread(pg_url):
    c = PostgresRequestCache(pg_url)
    workers = [threading.Thread(target=c.get, args=("k",)) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    opened = list(c._opened)
    c.close()
    assert len(opened) == 4 and all(conn._conn.closed for conn in opened)


@pytest.mark.postgres
def test_the_postgresql_store_is_chosen_by_the_environment_and_named_without_its_password(pg_url, tmp_path):
    c = open_request_cache(tmp_path / "c.sqlite", environ={CACHE_URL_ENV: pg_url})
    assert isinstance(c, PostgresRequestCache) and not (tmp_path / "c.sqlite").exists()
    assert postgres_cluster().password not in str(c.path) + str(c.stats())
    c.close()


# ---- a URL or a database that is not a cache: one line naming it (issue 33, point 6) ----------------------
def test_a_port_that_is_no_number_is_named_with_the_password_masked(tmp_path):
    url = "postgresql://u:hunter2@db:54x2/c"
    with pytest.raises(SocialbenchError) as err:
        open_request_cache(tmp_path / "c.sqlite", environ={CACHE_URL_ENV: url})
    assert (
        str(err.value)
        == f"{CACHE_URL_ENV}: postgresql://***@db:54x2/c: its port '54x2' is not a number from 1 to 65535"
    )


def test_a_url_without_a_database_is_refused(tmp_path):
    with pytest.raises(SocialbenchError, match="names no database"):
        open_request_cache(tmp_path / "c.sqlite", environ={CACHE_URL_ENV: "postgresql://u@db:5432"})


@pytest.fixture
def foreign_db(pg_url):
    url = postgres_cluster().url("not_a_cache")
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS calls")
        conn.execute("CREATE TABLE calls (id BIGINT PRIMARY KEY, who TEXT)")
    return url


@pytest.mark.postgres
@pytest.mark.parametrize("readonly", [False, True], ids=["run", "inspect"])
def test_a_database_whose_calls_table_is_not_a_cache_is_refused_and_left_alone(foreign_db, readonly):
    import psycopg

    with pytest.raises(DataError, match=r"is a PostgreSQL database but not a request cache \(its 'calls' table lacks"):
        PostgresRequestCache(foreign_db, readonly=readonly)
    with psycopg.connect(foreign_db) as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert tables == {"calls"}  # no claims table created beside it


@pytest.mark.postgres
def test_the_postgresql_store_keeps_its_tables_check_and_reads_back(pg_cache):
    req = moca_request(0)
    key = cache_key(IDENTITY, req)
    pg_cache.put(key, IDENTITY, req, Response(text="x"), "m")
    ro = PostgresRequestCache.open_readonly(pg_cache.url)
    assert ro.stats()["entries"] == 1 and ro.entries_for("m", req.request_id)[0]["key"] == key
    ro.close()
