"""The SQLite request cache (core.cache_sqlite): content-addressed keys, no repeated calls, resume after
kill -9, miss explanations from its history, read-only inspection, a full disk, claims shared across processes."""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from socialbench.core.backend import ImagePart, ModelSpec, Response, create_backend
from socialbench.core.cache import RequestCache, cache_key
from socialbench.core.errors import DataError
from socialbench.core.hashing import sha256_file
from tests.core.test_paths import fill
from tests.helpers.loopback import Fault, LoopbackServer
from tests.helpers.moca_requests import moca_request, run_through_cache, write_png
from tests.helpers.resume_worker import backend_and_requests

IDENTITY = {"backend": "openai_compat", "model_id": "org/model", "revision": "r1", "image_size": 448}
REPO = Path(__file__).resolve().parents[2]


def with_decoding(request, **fields):
    return dataclasses.replace(request, decoding=dataclasses.replace(request.decoding, **fields))


@pytest.fixture
def cache(tmp_path):
    c = RequestCache(tmp_path / "cache.sqlite")
    yield c
    c.close()


@pytest.fixture
def server():
    with LoopbackServer("openai") as srv:
        yield srv


def loopback_backend(server, concurrency=4):
    spec = ModelSpec(
        name="m",
        backend="openai_compat",
        model_id="served",
        concurrency=concurrency,
        options={"base_url": server.url, "retry_base_delay_s": 0.01, "max_retries": 1},
    )
    return create_backend(spec)


def test_stored_response_is_returned_as_a_hit(cache):
    req = moca_request(0)
    key = cache_key(IDENTITY, req)
    cache.put(key, IDENTITY, req, Response(text='{"a": 1}', input_tokens=10, output_tokens=3, latency_s=0.5), "m")
    hit = cache.get(key)
    assert (hit.text, hit.input_tokens, hit.output_tokens, hit.latency_s, hit.cached) == ('{"a": 1}', 10, 3, 0.5, True)


def test_cache_file_is_in_wal_mode(cache):
    assert cache._conn().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_one_changed_image_byte_is_a_miss(tmp_path, cache):
    part = write_png(tmp_path / "a.png")
    req = moca_request(0, [part])
    cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="x"), "m")
    data = bytearray((tmp_path / "a.png").read_bytes())
    data[len(data) // 2] ^= 0x01
    (tmp_path / "a.png").write_bytes(bytes(data))
    changed = moca_request(0, [ImagePart(part.path, sha256_file(part.path))])
    assert cache.get(cache_key(IDENTITY, changed)) is None
    exp = cache.explain_miss(IDENTITY, changed, "m")
    assert exp.parts == ["messages"] and exp.changes[0].path == "messages[1].content[0].image_sha256"
    assert "image bytes changed" in exp.summary()


def test_same_bytes_at_another_path_is_a_hit(tmp_path, cache):
    a = write_png(tmp_path / "a.png")
    (tmp_path / "copy.png").write_bytes((tmp_path / "a.png").read_bytes())
    req = moca_request(0, [a])
    cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="x"), "m")
    moved = moca_request(0, [ImagePart(str(tmp_path / "copy.png"), sha256_file(tmp_path / "copy.png"))])
    assert cache.get(cache_key(IDENTITY, moved)) is not None


@pytest.mark.parametrize(
    "change,part,path",
    [
        (lambda i, r: ({**i, "model_id": "org/other"}, r), "identity", "identity.model_id"),
        (lambda i, r: ({**i, "revision": "r2"}, r), "identity", "identity.revision"),
        (lambda i, r: (i, with_decoding(r, max_tokens=99)), "decoding", "decoding.max_tokens"),
        (lambda i, r: (i, with_decoding(r, temperature=0.7)), "decoding", "decoding.temperature"),
        (lambda i, r: (i, with_decoding(r, top_p=0.9)), "decoding", "decoding.top_p"),
        (lambda i, r: (i, with_decoding(r, stop=("\n\n",))), "decoding", "decoding.stop"),
        (lambda i, r: (i, with_decoding(r, seed=7)), "decoding", "decoding.seed"),
        (lambda i, r: (i, with_decoding(r, sample=1)), "decoding", "decoding.sample"),
        (lambda i, r: (i, with_decoding(r, json_object=True)), "decoding", "decoding.json_object"),
        (lambda i, r: (i, moca_request(0, text="another text")), "messages", "messages[1].content[0]"),
    ],
    ids=["model", "revision", "max_tokens", "temperature", "top_p", "stop", "seed", "sample", "json_object", "prompt"],
)
def test_every_key_part_counts_and_the_miss_names_it(cache, change, part, path):
    req = moca_request(0)
    cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="x"), "m")
    identity, new_req = change(IDENTITY, req)
    assert cache.get(cache_key(identity, new_req)) is None
    exp = cache.explain_miss(identity, new_req, "m")
    assert part in exp.parts and path in [c.path for c in exp.changes]


def test_new_request_id_is_explained_as_new(cache):
    exp = cache.explain_miss(IDENTITY, moca_request(5), "m")
    assert not exp.hit and exp.compared_key is None and "new instance" in exp.summary()


def test_rerun_with_no_change_makes_zero_calls(server, cache):
    requests = [moca_request(i) for i in range(6)]
    first, called_first = run_through_cache(loopback_backend(server), requests, cache)
    second, called_second = run_through_cache(loopback_backend(server), requests, cache)
    assert (called_first, called_second, len(server.completions())) == (6, 0, 6)
    assert [r.text for r in first] == [r.text for r in second] and all(r.cached for r in second)


def test_one_added_instance_calls_only_that_instance(server, cache):
    run_through_cache(loopback_backend(server), [moca_request(i) for i in range(5)], cache)
    _, called = run_through_cache(loopback_backend(server), [moca_request(i) for i in range(6)], cache)
    assert called == 1 and "Instance 5:" in str(server.completions()[-1].body["messages"][1])


def test_failed_calls_are_not_cached_and_are_retried_by_the_next_run(server, cache):
    server.scripted.extend([Fault(status=500), Fault(status=500)])  # first call fails for good
    out, _ = run_through_cache(loopback_backend(server, concurrency=1), [moca_request(0)], cache)
    assert out[0].error is not None
    out, called = run_through_cache(loopback_backend(server, concurrency=1), [moca_request(0)], cache)
    assert called == 1 and out[0].error is None


@pytest.mark.slow
def test_resume_after_kill_9_repeats_only_the_calls_in_flight(tmp_path):
    n = 8

    def stagger(_number, body):  # instance k answers after 0.4*k s, so the run is killed mid-way
        k = int(str(body["messages"][1]).split("Instance ", 1)[1].split(":", 1)[0])
        return Fault(delay_s=0.4 * k)

    cache_path = tmp_path / "cache.sqlite"
    with LoopbackServer("openai", fault_for=stagger) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.resume_worker", str(cache_path), srv.url, str(n)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        stored_before_kill = set()
        for line in proc.stdout:
            if line.startswith("stored "):
                stored_before_kill.add(int(line.split()[1]))
            if len(stored_before_kill) == 2:
                deadline = time.monotonic() + 10
                while len(srv.completions()) < n and time.monotonic() < deadline:
                    time.sleep(0.01)  # kill only once every call is in flight
                os.kill(proc.pid, signal.SIGKILL)
                break
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        seen_by_server = len(srv.completions())
        cache = RequestCache(cache_path)
        stored = {int(r[0].split("-")[1].split("/")[0]) for r in cache._conn().execute("SELECT request_id FROM calls")}
        backend, requests = backend_and_requests(srv.url, n)
        _, called = run_through_cache(backend, requests, cache)
        recalled = {
            int(str(r.body["messages"][1]).split("Instance ", 1)[1].split(":", 1)[0])
            for r in srv.completions()[seen_by_server:]
        }
        cache.close()
    assert seen_by_server == n  # every call had been sent before the kill
    assert stored >= stored_before_kill and len(stored) < n
    assert recalled == set(range(n)) - stored and called == len(recalled)


def test_hits_are_counted_and_stats_summarise_per_model(cache):
    for i in range(3):
        req = moca_request(i)
        cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="x", input_tokens=10, output_tokens=2), "m")
    cache.get(cache_key(IDENTITY, moca_request(0)))
    cache.get(cache_key(IDENTITY, moca_request(0)))
    s = cache.stats()
    assert s["entries"] == 3 and s["hits_served"] == 2
    assert s["models"][0] | {"first_at": 0, "last_at": 0, "latency_s": 0} == {
        "model": "m",
        "backend": "openai_compat",
        "entries": 3,
        "input_tokens": 30,
        "output_tokens": 6,
        "hits_served": 2,
        "first_at": 0,
        "last_at": 0,
        "latency_s": 0,
    }


def test_recomputed_call_is_explained_from_history(cache):
    req = moca_request(0)
    cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="old"), "m")
    new_identity = {**IDENTITY, "revision": "r2"}
    cache.put(cache_key(new_identity, req), new_identity, req, Response(text="new"), "m")
    assert cache.recomputed() == [("m", req.request_id)]
    exp = cache.explain_stored("m", req.request_id)
    assert [(c.path, c.old, c.new) for c in exp.changes] == [("identity.revision", "r1", "r2")]


def write_old_cache(path):
    """A cache file as an older socialbench wrote it (no hit-count columns), holding entry k1."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE calls (key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL,"
        " request_id TEXT NOT NULL, key_parts TEXT NOT NULL, text TEXT, input_tokens INTEGER NOT NULL DEFAULT 0,"
        " output_tokens INTEGER NOT NULL DEFAULT 0, latency_s REAL NOT NULL DEFAULT 0, created_at REAL NOT NULL);"
        "INSERT INTO calls VALUES ('k1', 'b', 'm', 'r', '{}', 'kept', 1, 1, 0.1, 0);"
    )
    conn.commit()
    conn.close()


def test_old_cache_files_gain_the_new_columns(tmp_path):
    path = tmp_path / "old.sqlite"
    write_old_cache(path)
    cache = RequestCache(path)
    assert cache.get("k1").text == "kept" and cache.stats()["hits_served"] == 1
    cache.close()


def test_concurrent_writers_lose_nothing(cache):
    def write(t):
        for i in range(20):
            req = moca_request(t * 100 + i)
            cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text=str(i)), "m")

    threads = [threading.Thread(target=write, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.stats()["entries"] == 120


def _open_and_write(path, barrier, errors, worker):
    barrier.wait()  # every process opens the new cache at the same moment
    try:
        cache = RequestCache(path)
        for i in range(5):
            req = moca_request(worker * 100 + i)
            cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text=str(i)), "m")
        cache.close()
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        errors.put(repr(exc))


def test_processes_opening_a_new_cache_at_once_all_succeed(tmp_path):
    # Parallel Snakemake jobs do this on a fresh checkout; unserialised set-up failed about one
    # round in three with "database is locked".
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    for round_ in range(15):
        path = tmp_path / f"round{round_}" / "cache.sqlite"
        barrier, errors = ctx.Barrier(6), ctx.Queue()
        procs = [ctx.Process(target=_open_and_write, args=(path, barrier, errors, w)) for w in range(6)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert errors.empty(), f"round {round_}: {errors.get()}"
        assert [p.exitcode for p in procs] == [0] * 6
        cache = RequestCache(path)
        assert cache.stats()["entries"] == 30
        cache.close()


def test_a_file_that_is_not_a_cache_is_named_in_a_clear_error(tmp_path):
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"not a database, just bytes" * 100)
    with pytest.raises(DataError, match=r"cache\.sqlite: the request cache cannot be opened.*move it aside"):
        RequestCache(path)


# ---- read-only opening (``socialbench cache stats|explain``) ----------------------------------------
def _files(folder):
    return sorted(p.name for p in Path(folder).iterdir())


def _fill(path, n, model="m"):
    cache = RequestCache(path)
    for i in range(n):
        req = moca_request(i)
        cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text=str(i), input_tokens=3), model)
    return cache


def test_readonly_open_of_a_closed_cache_reads_every_entry_and_creates_no_file(tmp_path):
    path = tmp_path / "c.sqlite"
    _fill(path, 3).close()
    (tmp_path / "c.sqlite.lock").unlink(missing_ok=True)
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    ro = RequestCache.open_readonly(path)
    assert ro.stats()["entries"] == 3 and len(ro.entries_for("m", moca_request(1).request_id)) == 1
    assert cache_key(IDENTITY, moca_request(2)) in ro and ro.get(cache_key(IDENTITY, moca_request(2))).text == "2"
    ro.close()
    assert _files(tmp_path) == ["c.sqlite"]  # no -wal, -shm or .lock left behind
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_readonly_open_of_a_cache_in_use_sees_calls_the_writer_commits(tmp_path):
    path = tmp_path / "c.sqlite"
    writer = _fill(path, 2)  # still open: its -wal and -shm are there
    ro = RequestCache.open_readonly(path)
    assert ro.stats()["entries"] == 2
    req = moca_request(7)
    writer.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="later"), "m")
    assert ro.stats()["entries"] == 3
    ro.close()
    writer.close()
    assert RequestCache.open_readonly(path).stats()["entries"] == 3


def test_readonly_cache_does_not_count_hits_or_store_calls(tmp_path):
    path = tmp_path / "c.sqlite"
    _fill(path, 1).close()
    ro = RequestCache.open_readonly(path)
    req = moca_request(0)
    assert ro.get(cache_key(IDENTITY, req)).cached and ro.stats()["hits_served"] == 0
    with pytest.raises(RuntimeError, match="read-only"):
        ro.put(cache_key(IDENTITY, moca_request(5)), IDENTITY, moca_request(5), Response(text="x"), "m")
    ro.close()


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p.write_bytes(b""), "is empty, not a request cache"),
        (lambda p: p.write_text("hello\n"), r"is not a request cache \(not an SQLite database\)"),
        (lambda p: p.mkdir(), "is a folder, not a request cache"),
        (
            lambda p: sqlite3.connect(p).executescript("CREATE TABLE other (a);").close(),
            "SQLite database but not a request cache",
        ),
    ],
    ids=["empty", "text", "folder", "other-sqlite"],
)
def test_readonly_open_refuses_what_is_not_a_request_cache_and_changes_nothing(tmp_path, make, message):
    path = tmp_path / "thing"
    make(path)
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(DataError, match=message) as exc:
        RequestCache.open_readonly(path)
    assert exc.value.path == str(path)
    assert _files(tmp_path) == ["thing"]
    assert (path.read_bytes() if path.is_file() else None) == before


def test_readonly_open_of_a_missing_path_creates_nothing(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        RequestCache.open_readonly(tmp_path / "sub" / "c.sqlite")
    assert _files(tmp_path) == []


def test_readonly_stats_of_an_old_cache_without_hit_counts_leave_it_unmigrated(tmp_path):
    path = tmp_path / "old.sqlite"
    write_old_cache(path)
    before = path.read_bytes()
    ro = RequestCache.open_readonly(path)
    assert ro.stats()["entries"] == 1 and ro.stats()["hits_served"] == 0
    ro.close()
    assert path.read_bytes() == before and _files(tmp_path) == ["old.sqlite"]


# ---- finish reasons and Request v2 keys ------------------------------------------------------------
def test_finish_reason_is_stored_and_a_truncated_answer_replays_truncated(cache):
    cut, whole = moca_request(0), moca_request(1)
    cache.put(cache_key(IDENTITY, cut), IDENTITY, cut, Response(text='{"mechanism": "exp', finish_reason="length"), "m")
    cache.put(cache_key(IDENTITY, whole), IDENTITY, whole, Response(text="{}", finish_reason="stop"), "m")
    replayed = cache.get(cache_key(IDENTITY, cut))
    assert replayed.cached and replayed.finish_reason == "length" and replayed.truncated
    assert (
        cache.get(cache_key(IDENTITY, whole)).finish_reason == "stop"
        and not cache.get(cache_key(IDENTITY, whole)).truncated
    )


def test_a_truncated_answer_from_a_run_is_still_truncated_on_the_rerun(cache):
    backend = create_backend(
        ModelSpec(
            name="s",
            backend="scripted",
            options={"default": '{"mechanism": "exp', "finish_reasons": {moca_request(0).request_id: "length"}},
        )
    )
    first, called = run_through_cache(backend, [moca_request(0), moca_request(1)], cache)
    again, called_again = run_through_cache(backend, [moca_request(0), moca_request(1)], cache)
    assert (called, called_again) == (2, 0)
    assert [r.finish_reason for r in first] == [r.finish_reason for r in again] == ["length", "stop"]
    assert again[0].truncated and again[0].cached


def write_hit_count_cache(path):
    """A cache file as the previous socialbench wrote it (hit counts, no finish_reason), holding k1."""
    write_old_cache(path)
    conn = sqlite3.connect(path)
    conn.executescript(
        "ALTER TABLE calls ADD COLUMN hit_count INTEGER NOT NULL DEFAULT 0;"
        " ALTER TABLE calls ADD COLUMN last_hit_at REAL;"
    )
    conn.commit()
    conn.close()


@pytest.mark.parametrize("write", [write_old_cache, write_hit_count_cache], ids=["first-schema", "with-hit-counts"])
def test_old_cache_files_gain_the_finish_reason_column(tmp_path, write):
    path = tmp_path / "old.sqlite"
    write(path)
    cache = RequestCache(path)
    old = cache.get("k1")
    assert old.text == "kept" and old.finish_reason is None and not old.truncated  # the old entry did not say
    req = moca_request(0)
    cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="x", finish_reason="length"), "m")
    assert cache.get(cache_key(IDENTITY, req)).truncated
    cache.close()
    columns = {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(calls)")}
    assert {"finish_reason", "hit_count", "last_hit_at"} <= columns


@pytest.mark.parametrize("write", [write_old_cache, write_hit_count_cache], ids=["first-schema", "with-hit-counts"])
def test_readonly_get_from_an_old_cache_without_finish_reason_changes_nothing(tmp_path, write):
    path = tmp_path / "old.sqlite"
    write(path)
    before = path.read_bytes()
    ro = RequestCache.open_readonly(path)
    hit = ro.get("k1")
    ro.close()
    assert (hit.text, hit.finish_reason, hit.cached) == ("kept", None, True)
    assert path.read_bytes() == before and _files(tmp_path) == ["old.sqlite"]


def test_a_request_without_the_new_fields_keeps_its_old_key():
    # Decoding fields and part fields at their absent value are left out of the key, so every entry
    # stored before Request v2 is still a hit.
    req = moca_request(0, [ImagePart("a.png", "0" * 64, timestamp=1.5)])
    key = req.key()
    assert set(key) == {"messages", "task", "decoding"}
    assert key["decoding"] == {"max_tokens": 64, "temperature": 0.0, "json_schema": req.json_schema}
    assert key["messages"][1]["content"][0] == {"image_sha256": "0" * 64, "timestamp": 1.5}


def test_a_view_is_part_of_the_key():
    plain = moca_request(0, [ImagePart("a.png", "0" * 64)])
    viewed = moca_request(0, [ImagePart("a.png", "0" * 64, view="Closeup A")])
    assert cache_key(IDENTITY, plain) != cache_key(IDENTITY, viewed)


def test_a_request_with_a_value_that_is_not_json_has_no_key():
    req = moca_request(0)
    req.task["media_dir"] = Path("/data/moca")
    with pytest.raises(TypeError, match="not a plain JSON value: PosixPath"):
        cache_key(IDENTITY, req)


def test_a_changed_audio_or_video_file_is_explained_as_such(cache, tmp_path):
    from tests.helpers.moca_requests import write_wav

    a = write_wav(tmp_path / "a.wav")
    req = moca_request(0, [a])
    cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="x"), "m")
    b = write_wav(tmp_path / "b.wav", seconds=0.2)
    exp = cache.explain_miss(IDENTITY, moca_request(0, [b]), "m")
    assert [c.path for c in exp.changes] == ["messages[1].content[0].audio_sha256"]
    assert "audio bytes changed" in exp.summary()


# ---- a full disk: the cache stays usable and a rerun continues (issue 12, point 3) -------------------


@pytest.fixture
def cache_disk(mount_disk):
    """A 256 KiB disk: the cache's files take 40 KiB empty, then it holds about 7 big entries."""
    return mount_disk("256k")


def big_requests(n):
    # ~3 KB of prompt per request: a 64 KiB disk holds a handful of entries
    return [moca_request(i, text=f"Instance {i}: " + "a long transcript line. " * 120) for i in range(n)]


def test_a_cache_that_fills_up_mid_run_stops_with_one_line_and_keeps_every_finished_call(cache_disk, server):
    from socialbench.core.cache import CacheFull

    path = cache_disk / "cache.sqlite"
    requests = big_requests(40)
    cache = RequestCache(path)
    with pytest.raises(CacheFull) as exc:
        run_through_cache(loopback_backend(server, concurrency=1), requests, cache)
    cache.close()
    message = str(exc.value)
    assert "\n" not in message and message.startswith(f"{path}: the request cache cannot grow")
    assert "no space left on the device" in message
    stored = RequestCache.open_readonly(path)  # still a readable cache
    kept = stored.stats()["entries"]
    stored.close()
    made = len(server.completions())
    assert 0 < kept < 40 and made == kept + 1  # the run stopped at the call it could not store
    assert not [p for p in cache_disk.iterdir() if p.name.endswith(".tmp")]


def test_a_rerun_after_freeing_space_makes_only_the_calls_not_stored(cache_disk, server):
    from socialbench.core.cache import CacheFull

    path = cache_disk / "cache.sqlite"
    requests = big_requests(30)
    with pytest.raises(CacheFull):
        run_through_cache(loopback_backend(server, concurrency=1), requests, RequestCache(path))
    stored_before = stored_instances(path)
    kept = len(stored_before)
    made_before = len(server.completions())
    subprocess.run(["mount", "-o", "remount,size=4m", str(cache_disk)], check=True)  # space freed
    cache = RequestCache(path)
    out, called = run_through_cache(loopback_backend(server, concurrency=1), requests, cache)
    cache.close()
    again = [
        str(r.body["messages"][1]).split("Instance ", 1)[1].split(":", 1)[0] for r in server.completions()[made_before:]
    ]
    assert called == 30 - kept and len(again) == called and all(r.error is None for r in out)
    assert sorted(map(int, again)) == sorted(set(range(30)) - stored_before)  # none repeated


def stored_instances(path):
    cache = RequestCache.open_readonly(path)
    ids = {int(r[0].split("-")[1].split("/")[0]) for r in cache._conn().execute("SELECT request_id FROM calls")}
    cache.close()
    return ids


def test_a_full_disk_costs_only_the_hit_count_when_reading(cache_disk):
    path = cache_disk / "cache.sqlite"
    cache = RequestCache(path)
    req = moca_request(0)
    cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="kept"), "m")
    filler = fill(cache_disk)
    assert cache.get(cache_key(IDENTITY, req)).text == "kept"  # no OperationalError on the hit count
    cache.close()
    filler.unlink()


# ---- calls in flight shared across processes (issue 12, point 8) ------------------------------------
def _share_run(url, n, cache_path, barrier, results):
    barrier.wait()  # both pipelines start their run at the same moment
    try:
        spec = ModelSpec(
            name="m",
            backend="openai_compat",
            model_id="served",
            concurrency=4,
            options={"base_url": url, "timeout": 30},
        )
        out, called = run_through_cache(
            create_backend(spec), [moca_request(i) for i in range(n)], RequestCache(cache_path)
        )
        results.put((called, [r.text for r in out], [r.error for r in out]))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        results.put(repr(exc))


def test_two_processes_on_one_cache_make_each_distinct_call_once(tmp_path):
    import multiprocessing

    n = 12
    ctx = multiprocessing.get_context("fork")
    with LoopbackServer("openai", latency_s=0.3) as srv:  # slow: the second run starts while calls are in flight
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [
            ctx.Process(target=_share_run, args=(srv.url, n, tmp_path / "c.sqlite", barrier, results)) for _ in range(2)
        ]
        for p in procs:
            p.start()
        got = [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(30)
        seen = [r.body["messages"][1] for r in srv.completions()]
    assert all(isinstance(g, tuple) for g in got), got
    assert len(seen) == n and len({str(s) for s in seen}) == n  # each distinct request reached the server once
    assert got[0][0] + got[1][0] == n  # the calls were made once between them; the other run waited
    assert got[0][1] == got[1][1] and not any(e for g in got for e in g[2])


def _claim_row(path, key, pid, host=None, claimed_at=None):
    import socket

    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT OR REPLACE INTO claims(key, owner, host, pid, pid_started, claimed_at) VALUES (?,?,?,?,?,?)",
        (key, f"other:{pid}", host or socket.gethostname(), pid, None, claimed_at or time.time()),
    )
    conn.commit()
    conn.close()


def test_a_claim_of_a_process_that_died_is_taken_over_and_called_here(tmp_path, server):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = tmp_path / "c.sqlite"
    cache = RequestCache(path)
    backend = loopback_backend(server)
    _claim_row(path, cache_key(backend.identity(), moca_request(0)), dead.pid)
    out, called = run_through_cache(backend, [moca_request(0)], cache)
    cache.close()
    assert called == 1 and out[0].error is None and len(server.completions()) == 1


def test_a_call_a_live_process_claimed_is_waited_for_not_made_again(tmp_path, server):
    path = tmp_path / "c.sqlite"
    cache = RequestCache(path)
    backend = loopback_backend(server)
    req = moca_request(0)
    key = cache_key(backend.identity(), req)
    claimant = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        _claim_row(path, key, claimant.pid)

        def claimant_finishes():  # the other run stores its answer half a second later
            time.sleep(0.5)
            other = RequestCache(path)
            other.put(key, backend.identity(), req, Response(text='{"from": "the other run"}'), "m")
            other.close()

        threading.Thread(target=claimant_finishes).start()
        out, called = run_through_cache(backend, [req], cache)
    finally:
        claimant.kill()
        claimant.wait()
    cache.close()
    assert out[0].text == '{"from": "the other run"}' and out[0].cached and called == 0
    assert server.completions() == []


def test_a_claimant_killed_while_waited_for_is_taken_over(tmp_path, server):
    path = tmp_path / "c.sqlite"
    cache = RequestCache(path)
    backend = loopback_backend(server)
    claimant = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    _claim_row(path, cache_key(backend.identity(), moca_request(0)), claimant.pid)
    threading.Timer(0.5, claimant.kill).start()  # kill -9 of the other run, its call unfinished
    out, called = run_through_cache(backend, [moca_request(0)], cache)
    claimant.wait()
    cache.close()
    assert called == 1 and out[0].error is None and len(server.completions()) == 1


def test_a_claim_from_another_host_is_taken_over_once_older_than_its_ttl(tmp_path, server):
    from socialbench.core.cache import CLAIM_TTL_S

    path = tmp_path / "c.sqlite"
    cache = RequestCache(path)
    backend = loopback_backend(server)
    _claim_row(
        path,
        cache_key(backend.identity(), moca_request(0)),
        1,
        host="elsewhere",
        claimed_at=time.time() - CLAIM_TTL_S - 1,
    )
    _, called = run_through_cache(backend, [moca_request(0)], cache)
    cache.close()
    assert called == 1


def test_claims_are_released_when_the_run_stops(tmp_path, server):
    server.scripted.extend([Fault(status=400)])  # the call fails for good: not stored, claim given up
    path = tmp_path / "c.sqlite"
    cache = RequestCache(path)
    run_through_cache(loopback_backend(server, concurrency=1), [moca_request(0), moca_request(1)], cache)
    assert cache._conn().execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    cache.close()


# ---- a damaged or foreign cache is named, never a traceback (issue 33, points 6 and 9) ---------------
def _set(path, sql, *args):
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


def test_a_damaged_page_is_one_error_naming_the_cache(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = RequestCache(path)
    for i in range(60):  # answers of 2 kB: the calls table spans many pages
        req = moca_request(i)
        cache.put(cache_key(IDENTITY, req), IDENTITY, req, Response(text="x" * 2000), "m")
    cache.close()
    data = bytearray(path.read_bytes())
    page = 4096
    data[page * 5 : page * 9] = b"\xff" * (page * 4)  # pages of the table, not the schema on page 1
    path.write_bytes(bytes(data))
    ro = RequestCache.open_readonly(path)
    with pytest.raises(DataError) as exc:
        ro.stats()
    ro.close()
    assert str(exc.value).startswith(f"{path}: the request cache cannot be read (") and "move it aside" in str(
        exc.value
    )


def test_a_blob_where_text_belongs_names_the_entry_and_field_in_stats(tmp_path):
    path = tmp_path / "c.sqlite"
    _fill(path, 2).close()
    key = cache_key(IDENTITY, moca_request(1))
    _set(path, "UPDATE calls SET model = CAST('m' AS BLOB) WHERE key = ?", key)
    ro = RequestCache.open_readonly(path)
    with pytest.raises(DataError) as exc:
        ro.stats()
    ro.close()
    assert str(exc.value).startswith(f"{path}, record key {key[:12]}…, field 'model': holds a BLOB where")


def test_a_blob_answer_is_refused_when_read_by_a_run_not_replayed(tmp_path):
    path = tmp_path / "c.sqlite"
    _fill(path, 1).close()
    key = cache_key(IDENTITY, moca_request(0))
    _set(path, "UPDATE calls SET text = CAST('0' AS BLOB) WHERE key = ?", key)
    cache = RequestCache(path)
    with pytest.raises(
        DataError, match=r"record key .*, field 'text': holds a BLOB where the request cache keeps text"
    ):
        cache.get(key)
    cache.close()


def test_key_parts_that_are_not_json_name_the_entry_when_explaining(tmp_path):
    path = tmp_path / "c.sqlite"
    _fill(path, 1).close()
    key = cache_key(IDENTITY, moca_request(0))
    _set(path, "UPDATE calls SET key_parts = '{cut short' WHERE key = ?", key)
    ro = RequestCache.open_readonly(path)
    with pytest.raises(DataError, match=r"record key .*, field 'key_parts': is not JSON"):
        ro.entries_for("m", moca_request(0).request_id)
    ro.close()


def test_a_database_with_another_calls_table_is_refused_for_writing_and_left_as_it_was(tmp_path):
    path = tmp_path / "app.db"
    _set(path, "CREATE TABLE calls (id INTEGER PRIMARY KEY, who TEXT)")
    before = path.read_bytes()
    with pytest.raises(DataError, match=r"app.db: is an SQLite database but not a request cache \(its 'calls' table"):
        RequestCache(path)
    assert path.read_bytes() == before


def test_a_database_error_while_storing_names_the_cache_and_the_entry(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = RequestCache(path)
    cache._conn().execute("DROP TABLE claims")  # a cache damaged under a run
    req = moca_request(0)
    key = cache_key(IDENTITY, req)
    with pytest.raises(DataError) as exc:
        cache.put(key, IDENTITY, req, Response(text="x"), "m")
    cache.close()
    assert str(exc.value).startswith(f"{path}, record key {key[:12]}…: the request cache cannot be written (")


def test_a_file_that_is_not_sqlite_opened_for_a_run_is_one_error_naming_it(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_text("not a database, but long enough to have a header of its own\n" * 4)
    with pytest.raises(DataError, match=r"c.sqlite: the request cache cannot be opened \(file is not a database\)"):
        RequestCache(path)
