"""The AMI official download layout, its local-mirror mapping, and the thin fetchers (loopback only)."""

from __future__ import annotations

import hashlib
import logging
import re
import zipfile
from pathlib import Path

import pytest

from socialbench.core.errors import ConfigError, DataError
from socialbench.meetingtom.dataset import acquire as ami

FAST = {"backoff": 0.0, "timeout": 5.0}


def test_media_sources_follow_the_official_mirror_layout():
    got = ami.media_sources(["ES2002a"], ["Corner", "Closeup3", "Mix-Headset"])
    base = "https://groups.inf.ed.ac.uk/ami/AMICorpusMirror/amicorpus/ES2002a"
    assert got == [
        (f"{base}/video/ES2002a.Corner.avi", "amicorpus/ES2002a/video/ES2002a.Corner.avi"),
        (f"{base}/video/ES2002a.Closeup3.avi", "amicorpus/ES2002a/video/ES2002a.Closeup3.avi"),
        (f"{base}/audio/ES2002a.Mix-Headset.wav", "amicorpus/ES2002a/audio/ES2002a.Mix-Headset.wav"),
    ]


def test_default_views_are_corner_four_closeups_and_headset_mix():
    assert ami.DEFAULT_VIEWS == ("Corner", "Closeup1", "Closeup2", "Closeup3", "Closeup4", "Mix-Headset")
    got = ami.media_sources(["IS1000a", "IB4001"])
    assert len(got) == 12
    assert got[6].relpath == "amicorpus/IB4001/video/IB4001.Corner.avi"


def test_media_sources_list_each_file_once_meeting_major():
    got = ami.media_sources(["TS3003a", "ES2002a", "TS3003a"], ["Closeup1", "Closeup1"])
    assert [s.relpath.split("/")[1] for s in got] == ["TS3003a", "ES2002a"]


def test_annotations_source_is_the_official_manual_release_zip():
    src = ami.annotations_source()
    assert src.url == "https://groups.inf.ed.ac.uk/ami/AMICorpusAnnotations/ami_public_manual_1.6.2.zip"
    assert src.relpath == "ami_public_manual_1.6.2.zip"


def test_unknown_view_is_a_config_error_listing_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown AMI view 'Overview'; known views: Corner, Closeup1"):
        ami.media_sources(["ES2002a"], ["Overview"])


@pytest.mark.parametrize("meeting", ["es2002a", "../ES2002a", "ES2002a/x", "XX1234a", "ES2002ab", ""])
def test_malformed_meeting_id_is_refused(meeting):
    with pytest.raises(ConfigError, match="is not an AMI meeting id"):
        ami.media_relpath(meeting, "Corner")


def test_a_single_string_instead_of_a_list_is_refused():
    with pytest.raises(ConfigError, match="lists of names"):
        ami.media_sources("ES2002a")


def test_base_url_override_keeps_the_relative_layout():
    (src,) = ami.media_sources(["EN2001a"], ["Mix-Headset"], base_url="http://127.0.0.1:9/ami/")
    assert src.url == "http://127.0.0.1:9/ami/amicorpus/EN2001a/audio/EN2001a.Mix-Headset.wav"


def test_mirror_maps_the_relative_layout_onto_a_local_folder(tmp_path):
    (src,) = ami.media_sources(["ES2002a"], ["Closeup2"], mirror=tmp_path)
    assert Path(src.url) == tmp_path / "amicorpus" / "ES2002a" / "video" / "ES2002a.Closeup2.avi"
    assert src.relpath == "amicorpus/ES2002a/video/ES2002a.Closeup2.avi"


def test_fetch_media_copies_from_a_local_mirror(tmp_path):
    mirror = tmp_path / "mirror"
    for s in ami.media_sources(["ES2002a"], ["Corner", "Mix-Headset"], mirror=mirror):
        Path(s.url).parent.mkdir(parents=True, exist_ok=True)
        Path(s.url).write_bytes(s.relpath.encode())
    out = ami.fetch_media(["ES2002a"], ["Corner", "Mix-Headset"], tmp_path / "raw", mirror=mirror)
    assert [p.relative_to(tmp_path / "raw").as_posix() for p in out] == [
        "amicorpus/ES2002a/video/ES2002a.Corner.avi",
        "amicorpus/ES2002a/audio/ES2002a.Mix-Headset.wav",
    ]
    assert out[0].read_bytes() == b"amicorpus/ES2002a/video/ES2002a.Corner.avi"


def test_missing_mirror_file_is_named_before_anything_is_copied(tmp_path):
    mirror = tmp_path / "mirror"
    present = mirror / "amicorpus/ES2002a/video/ES2002a.Corner.avi"
    present.parent.mkdir(parents=True)
    present.write_bytes(b"corner")
    missing = mirror / "amicorpus/ES2002a/video/ES2002a.Closeup1.avi"
    with pytest.raises(DataError, match=rf"^{re.escape(str(missing))}: not in the AMI mirror"):
        ami.fetch_media(["ES2002a"], ["Corner", "Closeup1", "Closeup2"], tmp_path / "raw", mirror=mirror)
    assert not (tmp_path / "raw").exists()


@pytest.mark.shared
def test_shared_annotation_copy_has_no_videos_and_says_so(shared_dir, tmp_path):
    mirror = shared_dir / "data" / "ami"
    expected = mirror / "amicorpus" / "ES2002a" / "video" / "ES2002a.Corner.avi"
    with pytest.raises(
        DataError, match=rf"^{re.escape(str(expected))}: not in the AMI mirror .* \(and 5 more of 6 files\)"
    ):
        ami.fetch_media(["ES2002a"], ami.DEFAULT_VIEWS, tmp_path / "raw", mirror=mirror)


@pytest.mark.shared
def test_every_meeting_in_the_shared_meetings_file_is_a_valid_id(shared_dir):
    text = (shared_dir / "data/ami/corpusResources/meetings.xml").read_text(encoding="iso-8859-1")
    meetings = set(re.findall(r'observation="([^"]+)"', text))
    cameras = set(re.findall(r'camera="([^"]+)"', text))
    assert len(meetings) > 100
    assert all(ami.MEETING_ID.fullmatch(m) for m in meetings)
    assert cameras <= set(ami.VIDEO_VIEWS)


def _annotations_zip(path: Path) -> bytes:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("00README_MANUAL.txt", "AMI Manual Annotations (test stand-in)\n")
        zf.writestr("words/ES2002a.A.words.xml", "<nite:root/>\n")
    return path.read_bytes()


def test_fetch_annotations_downloads_and_unpacks(server, tmp_path):
    data = _annotations_zip(tmp_path / "src.zip")
    url = server.add("/AMICorpusAnnotations/ami_public_manual_1.6.2.zip", data)
    folder = ami.fetch_annotations(tmp_path / "raw", url=url, sha256=hashlib.sha256(data).hexdigest(), **FAST)
    assert folder == tmp_path / "raw" / "annotations"
    assert (folder / "words" / "ES2002a.A.words.xml").read_text() == "<nite:root/>\n"
    assert (tmp_path / "raw" / "ami_public_manual_1.6.2.zip").read_bytes() == data


def test_fetch_annotations_twice_does_not_fetch_or_extract_again(server, tmp_path):
    data = _annotations_zip(tmp_path / "src.zip")
    url = server.add("/a/ami_public_manual_1.6.2.zip", data)
    digest = hashlib.sha256(data).hexdigest()
    folder = ami.fetch_annotations(tmp_path / "raw", url=url, sha256=digest, **FAST)
    marker = folder / "marker"
    marker.write_text("still here")
    ami.fetch_annotations(tmp_path / "raw", url=url, sha256=digest, **FAST)
    assert marker.exists()
    assert len(server.requests) == 1


def test_unpinned_annotations_are_used_with_a_warning(server, tmp_path, caplog):
    data = _annotations_zip(tmp_path / "src.zip")
    url = server.add("/a/ami_public_manual_1.6.2.zip", data)
    caplog.set_level(logging.WARNING, logger="socialbench.acquire")
    folder = ami.fetch_annotations(tmp_path / "raw", url=url, sha256=None, **FAST)
    assert (folder / "00README_MANUAL.txt").exists()
    assert "no sha256 pinned" in caplog.text


def test_annotations_mirror_without_the_zip_is_a_clear_error(tmp_path):
    mirror = tmp_path / "ami"
    (mirror / "words").mkdir(parents=True)  # unpacked annotations only, like ../shared/data/ami
    with pytest.raises(DataError, match=r"ami_public_manual_1\.6\.2\.zip: not in the AMI mirror"):
        ami.fetch_annotations(tmp_path / "raw", mirror=mirror, sha256=None)


def test_fetch_media_from_a_base_url_verifies_given_checksums(server, tmp_path):
    rel = "amicorpus/ES2002a/audio/ES2002a.Mix-Headset.wav"
    server.add(f"/mirror/{rel}", b"RIFF....WAVE")
    base = server.url("/mirror/")
    (path,) = ami.fetch_media(
        ["ES2002a"],
        ["Mix-Headset"],
        tmp_path / "raw",
        base_url=base,
        sha256={rel: hashlib.sha256(b"RIFF....WAVE").hexdigest()},
        **FAST,
    )
    assert path == tmp_path / "raw" / rel and path.read_bytes() == b"RIFF....WAVE"
