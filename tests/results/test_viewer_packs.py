"""The viewer's media packed for MLflow (socialbench.results.viewer_packs): how media are cut into
packs, the bound on their number, the bytes written, and that the same media give the same files."""

from __future__ import annotations

import json
import random

import pytest

from socialbench.results.viewer_packs import INDEX_NAME, pack_limit, plan_packs, read_packed, write_packs


def test_media_go_to_packs_in_name_order_each_pack_at_most_the_limit():
    assert plan_packs([("c", 40), ("a", 40), ("b", 40), ("d", 10)], pack_bytes=100) == [["a", "b"], ["c", "d"]]


def test_a_medium_larger_than_a_pack_gets_a_pack_of_its_own():
    assert plan_packs([("a", 10), ("b", 500), ("c", 10)], pack_bytes=100) == [["a"], ["b"], ["c"]]


@pytest.mark.parametrize("seed", range(5))
def test_however_many_media_there_are_they_fill_at_most_max_packs(seed):
    rng = random.Random(seed)
    sizes = [(f"{k:06d}", rng.randint(1, 5000)) for k in range(20_000)]
    packs = plan_packs(sizes, pack_bytes=1000, max_packs=50)
    assert len(packs) <= 50 and sorted(n for p in packs for n in p) == sorted(n for n, _ in sizes)


def test_the_pack_limit_is_the_pack_size_until_the_media_would_need_more_packs():
    assert pack_limit(10_000, pack_bytes=1000, max_packs=100) == 1000
    assert pack_limit(1_000_000, pack_bytes=1000, max_packs=101) == 20_000


def test_a_medium_named_twice_is_refused():
    with pytest.raises(ValueError, match="named twice"):
        plan_packs([("a", 1), ("a", 2)])


def media_files(tmp_path, n=7):
    folder = tmp_path / "media"
    folder.mkdir()
    out = {}
    for k in range(n):
        data = bytes([k]) * (30 + 11 * k)
        (folder / f"{k:02d}.jpg").write_bytes(data)
        out[f"{k:02d}.jpg"] = folder / f"{k:02d}.jpg"
    return out


def test_each_medium_reads_back_from_its_pack_as_the_bytes_it_was_given(tmp_path):
    media = media_files(tmp_path)
    index = write_packs(media, tmp_path / "packs", pack_bytes=100)
    assert len(index["packs"]) > 2
    assert all(read_packed(tmp_path / "packs", name) == path.read_bytes() for name, path in media.items())


def test_the_packs_hold_exactly_the_media_bytes_and_the_index_names_each_pack_by_its_sha256(tmp_path):
    import hashlib

    media = media_files(tmp_path)
    index = write_packs(media, tmp_path / "packs", pack_bytes=100)
    packs = [tmp_path / "packs" / p for p in index["packs"]]
    assert sum(p.stat().st_size for p in packs) == sum(p.stat().st_size for p in media.values())
    assert all(p.name == hashlib.sha256(p.read_bytes()).hexdigest() + ".pack" for p in packs)
    assert sorted(f.name for f in (tmp_path / "packs").iterdir()) == sorted([*index["packs"], INDEX_NAME])
    assert json.loads((tmp_path / "packs" / INDEX_NAME).read_text()) == index


def test_the_same_media_give_the_same_files(tmp_path):
    media = media_files(tmp_path)
    write_packs(media, tmp_path / "a", pack_bytes=100)
    write_packs(dict(reversed(list(media.items()))), tmp_path / "b", pack_bytes=100)
    files = {f.name: f.read_bytes() for f in (tmp_path / "a").iterdir()}
    assert files == {f.name: f.read_bytes() for f in (tmp_path / "b").iterdir()}


def test_packing_into_a_folder_that_holds_files_is_refused(tmp_path):
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "old.pack").write_bytes(b"x")
    with pytest.raises(ValueError, match="must be empty"):
        write_packs(media_files(tmp_path), tmp_path / "packs")
