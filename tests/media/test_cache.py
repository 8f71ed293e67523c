import json
import os
import shutil
import subprocess
import sys

import pytest

from socialbench.core.hashing import sha256_file
from socialbench.media.cache import CACHE_FORMAT, INDEX, MANIFEST, FrameCache
from socialbench.media.errors import MediaError
from socialbench.media.sampling import FrameSampling
from tests.media.conftest import image_index

EIGHT = FrameSampling.uniform(8, max_side=80)


class NoProcess:
    def __init__(self, *args, **kwargs):
        raise AssertionError(f"a process was started: {args[0] if args else kwargs.get('args')}")


@pytest.fixture
def video(clip_mp4, tmp_path):
    path = tmp_path / "video.mp4"
    shutil.copyfile(clip_mp4, path)
    return path


def test_first_call_extracts_and_records_index_timestamp_and_hash_of_each_frame(video, tmp_path):
    cache = FrameCache(tmp_path / "frames")
    m = cache.frames(video, EIGHT)
    assert (cache.hits, cache.misses) == (0, 1)
    assert [f.index for f in m.frames] == [3, 9, 15, 21, 28, 34, 40, 46]
    assert [f.timestamp for f in m.frames] == [0.3, 0.9, 1.5, 2.1, 2.8, 3.4, 4.0, 4.6]
    assert [image_index(p) for p in m.paths()] == [f.index for f in m.frames]
    assert all(sha256_file(p) == f.sha256 for p, f in zip(m.paths(), m.frames))
    assert m.size == (80, 60)


def test_sidecar_manifest_is_written_next_to_the_frames(video, tmp_path):
    m = FrameCache(tmp_path / "frames").frames(video, EIGHT)
    data = json.loads((m.folder / MANIFEST).read_text("utf-8"))
    assert [(f["index"], f["timestamp"]) for f in data["frames"]] == [(f.index, f.timestamp) for f in m.frames]
    assert data["source"]["sha256"] == sha256_file(video) and data["source"]["frame_count"] == 50
    assert data["ffmpeg_version"].startswith("ffmpeg version")


def test_rerun_hits_the_cache_without_starting_any_process(video, tmp_path, monkeypatch):
    FrameCache(tmp_path / "frames").frames(video, EIGHT)
    monkeypatch.setattr(subprocess, "Popen", NoProcess)
    again = FrameCache(tmp_path / "frames")
    m = again.frames(video, EIGHT)
    assert (again.hits, again.misses) == (1, 0)
    assert [f.index for f in m.frames] == [3, 9, 15, 21, 28, 34, 40, 46]


def test_lookup_finds_only_what_was_extracted(video, tmp_path):
    cache = FrameCache(tmp_path / "frames")
    assert cache.lookup(video, EIGHT) is None
    extracted = cache.frames(video, EIGHT)
    assert cache.lookup(video, EIGHT).key == extracted.key


def test_same_bytes_under_another_name_hit_the_cache(video, tmp_path, monkeypatch):
    cache = FrameCache(tmp_path / "frames")
    first = cache.frames(video, EIGHT)
    twin = tmp_path / "renamed.mp4"
    shutil.copyfile(video, twin)
    monkeypatch.setattr(subprocess, "Popen", NoProcess)
    assert cache.frames(twin, EIGHT).key == first.key


def test_one_changed_byte_misses_the_cache(video, tmp_path):
    cache = FrameCache(tmp_path / "frames")
    first = cache.frames(video, EIGHT)
    data = bytearray(video.read_bytes())
    data[-100] ^= 0x01
    video.write_bytes(bytes(data))
    second = cache.frames(video, EIGHT)
    assert cache.misses == 2 and second.key != first.key and second.folder != first.folder


@pytest.mark.parametrize(
    "changed",
    [
        FrameSampling.uniform(8, max_side=64),
        FrameSampling.uniform(4, max_side=80),
        FrameSampling.uniform(8, max_side=80, image_format="jpg"),
        FrameSampling.at_fps(2, max_side=80),
    ],
)
def test_a_changed_parameter_misses_the_cache(video, tmp_path, changed):
    cache = FrameCache(tmp_path / "frames")
    first = cache.frames(video, EIGHT)
    second = cache.frames(video, changed)
    assert cache.misses == 2 and second.key != first.key


def test_a_changed_ffmpeg_build_misses_the_cache(video, tmp_path, monkeypatch):
    from socialbench.media import cache as cache_module

    cache = FrameCache(tmp_path / "frames")
    first = cache.frames(video, EIGHT)
    monkeypatch.setattr(cache_module, "tool_identity", lambda memo_dir=None: "another-build")
    assert cache.frames(video, EIGHT).key != first.key and cache.misses == 2


def test_a_damaged_cached_frame_is_extracted_again(video, tmp_path):
    cache = FrameCache(tmp_path / "frames")
    first = cache.frames(video, EIGHT)
    first.paths()[0].write_bytes(b"not a png")
    second = cache.frames(video, EIGHT)
    assert cache.misses == 2 and sha256_file(second.paths()[0]) == first.frames[0].sha256


def test_reextraction_gives_identical_bytes(video, tmp_path):
    a = FrameCache(tmp_path / "a").frames(video, EIGHT)
    b = FrameCache(tmp_path / "b").frames(video, EIGHT)
    assert [f.sha256 for f in a.frames] == [f.sha256 for f in b.frames]
    assert (a.folder / MANIFEST).read_bytes() == (b.folder / MANIFEST).read_bytes()


def test_records_carry_paths_relative_to_the_root(video, tmp_path):
    m = FrameCache(tmp_path / "data" / "frames").frames(video, EIGHT)
    recs = m.records(tmp_path)
    assert recs[0]["path"].startswith("data/frames/") and recs[0]["path"].endswith("/000003.png")
    assert list(recs[0]) == ["path", "sha256", "index", "timestamp"]


def test_bad_video_is_an_error_and_leaves_no_entry(tmp_path):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"garbage" * 100)
    cache = FrameCache(tmp_path / "frames")
    with pytest.raises(MediaError, match="bad.mp4: unknown_container"):
        cache.frames(bad, EIGHT)
    assert not list((tmp_path / "frames").glob("??/*"))


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    return proc.pid


def test_index_names_the_given_entries_and_their_frame_count_in_sorted_deterministic_bytes(video, tmp_path, clip_mkv):
    cache = FrameCache(tmp_path / "frames")
    a, b = cache.frames(video, EIGHT), cache.frames(clip_mkv, FrameSampling.uniform(3, max_side=80))
    path = tmp_path / "frames" / INDEX
    expected = {"entries": sorted([a.key, b.key]), "format": CACHE_FORMAT, "frames": 11}
    assert cache.write_index(path, {b.key, a.key}) == expected
    first = path.read_bytes()
    cache.write_index(path, [a.key, b.key])
    assert path.read_bytes() == first == (json.dumps(json.loads(first), sort_keys=True, indent=1) + "\n").encode()
    assert not any((tmp_path / "frames" / ".tmp").iterdir())  # written through .tmp/, nothing left there


def test_prune_keeps_the_index_and_the_listing_ignores_it(video, tmp_path):
    cache = FrameCache(tmp_path / "frames")
    m = cache.frames(video, EIGHT)
    cache.write_index(tmp_path / "frames" / INDEX, {m.key})
    assert cache.keys() == [m.key]
    assert cache.prune(set()) == 1
    assert cache.keys() == [] and (tmp_path / "frames" / INDEX).is_file()


def test_prune_removes_what_killed_extractions_left_in_tmp_but_not_what_live_ones_write(video, tmp_path):
    cache = FrameCache(tmp_path / "frames")
    m = cache.frames(video, EIGHT)
    tmp = tmp_path / "frames" / ".tmp"
    dead, live = _dead_pid(), os.getpid()
    for name in (f"{'ab' * 32}.{dead}", f"{'cd' * 32}.{live}"):
        (tmp / name).mkdir(parents=True)
        (tmp / name / "000003.png").write_bytes(b"partial")
    (tmp / f"{INDEX}.{dead}").write_text("{", "utf-8")
    cache.prune({m.key})
    assert sorted(p.name for p in tmp.iterdir()) == [f"{'cd' * 32}.{live}"]
    assert cache.keys() == [m.key]


def test_prune_leaves_a_dead_process_leftover_while_its_key_is_locked(tmp_path):
    from filelock import FileLock

    cache = FrameCache(tmp_path / "frames")
    key = "ef" * 32
    leftover = tmp_path / "frames" / ".tmp" / f"{key}.{_dead_pid()}"
    leftover.mkdir(parents=True)
    (tmp_path / "frames" / ".locks").mkdir()
    with FileLock(str(tmp_path / "frames" / ".locks" / f"{key}.lock")):  # another extraction of the key
        cache.prune(set())
        assert leftover.is_dir()
    cache.prune(set())
    assert not leftover.exists()
