"""Acquisition of a MeetingToM source (socialbench.meetingtom.dataset.release): the release from a mirror's
archive, an unpacked mirror, an absent mirror or the host; media per meeting."""

import json
import shutil

import pytest

from socialbench.acquire.download import ChecksumMismatch
from socialbench.core.errors import DataError
from socialbench.core.hashing import sha256_file
from socialbench.meetingtom.dataset.release import acquire_release, fetch_meeting_media, mirror_state, read_source
from socialbench.meetingtom.schema.settings import DEMO_ARCHIVE
from tests.acquire.server import FileServer
from tests.meetingtom.conftest import source_for


def test_an_archive_in_the_mirror_is_copied_checked_and_extracted(demo_release, demo_mirror):
    from pathlib import Path

    assert demo_release["mode"] == "mirror-archive"
    assert demo_release["sha256"] == sha256_file(demo_mirror / DEMO_ARCHIVE)  # from the .sha256 beside it
    assert (Path(demo_release["annotations"]) / "corpusResources/meetings.xml").is_file()
    assert demo_release["present"] and demo_release["note"] is None


def test_the_source_record_is_written_beside_the_annotations(demo_release):
    from pathlib import Path

    folder = Path(demo_release["annotations"]).parent
    assert read_source(folder) == demo_release


def test_a_wrong_checksum_beside_the_archive_stops_before_extracting(tmp_path, demo_mirror):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    shutil.copy(demo_mirror / DEMO_ARCHIVE, mirror / DEMO_ARCHIVE)
    (mirror / f"{DEMO_ARCHIVE}.sha256").write_text("0" * 64 + f"  {DEMO_ARCHIVE}\n")
    with pytest.raises(ChecksumMismatch):
        acquire_release(source_for(mirror), tmp_path / "release", tmp_path / "downloads")
    assert not (tmp_path / "release" / "annotations").exists()


def test_a_checksum_in_params_wins_over_the_file_beside_the_archive(tmp_path, demo_mirror):
    with pytest.raises(ChecksumMismatch):
        acquire_release(source_for(demo_mirror, sha256="1" * 64), tmp_path / "release", tmp_path / "downloads")


def test_an_unpacked_mirror_is_read_in_place_with_a_manifest_of_its_files(tmp_path, ami_dir):
    info = acquire_release(source_for(ami_dir, name="ami"), tmp_path / "release", tmp_path / "downloads")
    assert info["mode"] == "mirror-folder" and info["annotations"] == str(ami_dir)
    manifest = json.loads((tmp_path / "release" / "manifest.json").read_text())
    assert manifest["corpusResources/meetings.xml"] == sha256_file(ami_dir / "corpusResources/meetings.xml")
    assert info["files"] == len(manifest)
    assert not (tmp_path / "downloads").exists() and not (tmp_path / "release" / "annotations").exists()


def test_an_absent_real_mirror_is_a_note_not_an_error(tmp_path):
    info = acquire_release(source_for(tmp_path / "nowhere", name="ami"), tmp_path / "release", tmp_path / "downloads")
    assert info["present"] is False and info["mode"] == "absent"
    assert "not found: no real-data instances" in info["note"]


def test_an_absent_demo_mirror_is_an_error(tmp_path):
    with pytest.raises(DataError, match="the demo mirror is missing"):
        acquire_release(source_for(tmp_path / "nowhere"), tmp_path / "release", tmp_path / "downloads")


def test_a_mirror_with_neither_archive_nor_release_is_named(tmp_path):
    (tmp_path / "mirror").mkdir()
    with pytest.raises(DataError, match="holds neither the archive"):
        acquire_release(source_for(tmp_path / "mirror", name="ami"), tmp_path / "release", tmp_path / "downloads")


def test_without_a_mirror_the_archive_is_downloaded_resuming_a_dropped_connection(tmp_path, demo_mirror, monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    data = (demo_mirror / DEMO_ARCHIVE).read_bytes()
    server = FileServer().start()
    try:
        url = server.add("/ami/release.zip", data)
        server.fault("/ami/release.zip", "drop")
        src = source_for(None, name="ami", url=url, sha256=sha256_file(demo_mirror / DEMO_ARCHIVE))
        info = acquire_release(src, tmp_path / "release", tmp_path / "downloads")
        assert [r.headers.get("Range") for r in server.requests_for("/ami/release.zip")][-1].startswith("bytes=")
    finally:
        server.stop()
    assert info["mode"] == "download" and (tmp_path / "downloads" / "release.zip").read_bytes() == data
    assert (tmp_path / "release" / "annotations" / "corpusResources" / "meetings.xml").is_file()


def test_media_come_from_the_mirror_with_their_checksums(tmp_path, demo_mirror):
    rec = fetch_meeting_media(source_for(demo_mirror), "ES9000a", tmp_path)
    assert set(rec["views"]) == {"Corner", "Closeup1", "Closeup2", "Closeup3", "Closeup4", "Mix-Headset"}
    corner = rec["views"]["Corner"]
    assert corner["path"] == "amicorpus/ES9000a/video/ES9000a.Corner.avi"
    assert corner["sha256"] == sha256_file(demo_mirror / corner["path"]) == sha256_file(tmp_path / corner["path"])
    assert json.loads((tmp_path / "amicorpus/ES9000a/fetched.json").read_text()) == rec


def test_a_media_file_changed_in_the_mirror_is_copied_again(tmp_path, demo_mirror):
    mirror = tmp_path / "mirror"
    shutil.copytree(demo_mirror / "amicorpus", mirror / "amicorpus")
    src = source_for(mirror, views=("Mix-Headset",))
    fetch_meeting_media(src, "ES9000a", tmp_path / "local")
    wav = "amicorpus/ES9000a/audio/ES9000a.Mix-Headset.wav"
    (mirror / wav).write_bytes(b"RIFF changed")
    rec = fetch_meeting_media(src, "ES9000a", tmp_path / "local")
    assert (tmp_path / "local" / wav).read_bytes() == b"RIFF changed" and rec["views"]["Mix-Headset"]["bytes"] == 12


def test_no_views_requested_is_a_note(tmp_path, ami_dir):
    rec = fetch_meeting_media(source_for(ami_dir, name="ami", views=()), "ES9000a", tmp_path)
    assert rec["views"] == {} and "no views requested" in rec["note"]


def test_a_view_missing_from_the_mirror_is_named(tmp_path, ami_dir):
    with pytest.raises(DataError, match="ES9000a.Corner.avi"):
        fetch_meeting_media(source_for(ami_dir, name="ami", views=("Corner",)), "ES9000a", tmp_path)


def test_the_mirror_state_changes_when_the_mirror_appears(tmp_path):
    src = source_for(tmp_path / "m", name="ami")
    before = mirror_state(src)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "x.xml").write_text("<x/>")
    after = mirror_state(src)
    assert before == {"mirror": str(tmp_path / "m"), "present": False}
    assert after == {"mirror": str(tmp_path / "m"), "present": True, "files": 1, "bytes": 4}


def test_an_unpinned_archive_gives_the_same_source_record_on_first_use_and_after(tmp_path, demo_mirror):
    """Issue 33, class 8: whether the hash was recorded now or checked against an earlier record is
    history (logged), not content: source.json is versioned and keeps its bytes."""
    from socialbench.acquire.download import TrustStore

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    shutil.copy(demo_mirror / DEMO_ARCHIVE, mirror / DEMO_ARCHIVE)  # no .sha256 beside it: not pinned
    trust = TrustStore(tmp_path / "sources.lock")
    records = []
    for _ in range(2):
        info = acquire_release(source_for(mirror), tmp_path / "release", tmp_path / "downloads", trust=trust)
        records.append((tmp_path / "release" / "source.json").read_bytes())
    assert records[0] == records[1] and info["verified"] == "recorded"
