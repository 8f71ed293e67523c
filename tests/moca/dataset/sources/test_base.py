"""Source acquisition (download through the loopback server, mirror, manual) and the candidate schema."""

import dataclasses
import hashlib
import io
import json
import zipfile

import pytest

from socialbench.acquire.archive import UnsafeArchive
from socialbench.acquire.download import ChecksumMismatch
from socialbench.core.errors import ConfigError, DataError
from socialbench.moca.dataset.sources import get_source, read_source
from socialbench.moca.dataset.sources.base import (
    MANIFEST,
    ManualStepRequired,
    RemoteFile,
    SourceOptions,
    acquire,
    candidate,
    validate_candidates,
)

MUSTARD = {
    "1_60": {
        "utterance": "It's just a privilege to watch your mind at work.",
        "speaker": "SHELDON",
        "context": ["I never would have identified it.", "My apologies."],
        "context_speakers": ["LEONARD", "SHELDON"],
        "show": "BBT",
        "sarcasm": True,
    },
    "2_10": {
        "utterance": "Oh, great.",
        "speaker": "CHANDLER",
        "context": [],
        "context_speakers": [],
        "show": "FRIENDS",
        "sarcasm": False,
    },
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def served_mustard(server, data: bytes, *, pinned: bool = True, extra=()):
    """TEST DOUBLE: the MUStARD source with its annotation file served by the loopback server."""
    url = server.add("/MUStARD/data/sarcasm_data.json", data)
    files = (RemoteFile("sarcasm_data.json", url, sha(data) if pinned else None, split="all"), *extra)
    return dataclasses.replace(get_source("mustard"), files=files)


def test_download_mode_fetches_verifies_and_reads_back(server, tmp_path):
    data = json.dumps(MUSTARD).encode()
    source = served_mustard(server, data)
    manifest = acquire(source, tmp_path / "mustard", SourceOptions(), backoff=0)
    assert manifest["files"][0]["sha256"] == sha(data) and manifest["files"][0]["pinned"]
    records = read_source("mustard", tmp_path / "mustard")
    assert [r["id"] for r in records] == ["mustard:1_60", "mustard:2_10"]


def test_a_dropped_connection_is_resumed_to_the_same_bytes(server, tmp_path):
    data = json.dumps(MUSTARD).encode() * 50
    source = served_mustard(server, data)
    server.fault("/MUStARD/data/sarcasm_data.json", "drop")
    acquire(source, tmp_path, SourceOptions(), backoff=0, chunk_size=1024)
    assert (tmp_path / "sarcasm_data.json").read_bytes() == data
    assert any("Range" in r.headers for r in server.requests_for("/MUStARD/data/sarcasm_data.json"))


def test_a_wrong_checksum_leaves_nothing_and_names_both_hashes(server, tmp_path):
    data = json.dumps(MUSTARD).encode()
    source = served_mustard(server, data)
    server.fault("/MUStARD/data/sarcasm_data.json", "wrong")
    with pytest.raises(ChecksumMismatch, match=f"expected {sha(data)}"):
        acquire(source, tmp_path, SourceOptions(), retries=0, backoff=0)
    assert not (tmp_path / "sarcasm_data.json").exists() and not (tmp_path / MANIFEST).exists()


def test_an_archive_with_a_parent_path_entry_is_refused_naming_the_member(server, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("mmsd_raw_data/utterances_final/1_60.mp4", b"x")
        zf.writestr("../../outside.txt", b"escape")
    url = server.add("/mmsd_raw_data.zip", buf.getvalue())
    data = json.dumps(MUSTARD).encode()
    source = served_mustard(
        server,
        data,
        extra=(RemoteFile("mmsd_raw_data.zip", url, sha(buf.getvalue()), kind="media", extract_to="videos"),),
    )
    with pytest.raises(UnsafeArchive) as err:
        acquire(source, tmp_path / "root", SourceOptions(media=True), backoff=0)
    assert "mmsd_raw_data.zip" in str(err.value) and "'../../outside.txt'" in str(err.value)
    assert not (tmp_path / "outside.txt").exists() and not (tmp_path / "root" / "videos").exists()


def test_a_media_archive_is_unpacked_and_its_clips_become_the_candidates_media(server, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("mmsd_raw_data/utterances_final/1_60.mp4", b"clip")
        zf.writestr("mmsd_raw_data/context_final/1_60_c.mp4", b"context clip")
    url = server.add("/mmsd_raw_data.zip", buf.getvalue())
    source = served_mustard(
        server,
        json.dumps(MUSTARD).encode(),
        extra=(RemoteFile("mmsd_raw_data.zip", url, sha(buf.getvalue()), kind="media", extract_to="videos"),),
    )
    acquire(source, tmp_path, SourceOptions(media=True), backoff=0)
    rec = source.read(tmp_path, SourceOptions())[0]
    assert rec["media"] == [str(tmp_path / "videos/mmsd_raw_data/utterances_final/1_60.mp4")]
    assert rec["metadata"]["context_clip"] == str(tmp_path / "videos/mmsd_raw_data/context_final/1_60_c.mp4")


def test_mirror_mode_copies_from_the_folder_and_checks_the_pinned_hash(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "sarcasm_data.json").write_text("{}")
    with pytest.raises(ChecksumMismatch):  # the real file's pinned sha256 does not match "{}"
        acquire(get_source("mustard"), tmp_path / "root", SourceOptions(mode="mirror", mirror=str(mirror)))


def test_mirror_mode_names_the_missing_file_and_how_files_are_named(tmp_path):
    (tmp_path / "mirror").mkdir()
    with pytest.raises(DataError, match=r"mirror/train.tsv: not in the mirror of source mintrec \(and 1 more\)"):
        acquire(
            get_source("mintrec"),
            tmp_path / "root",
            SourceOptions.from_mapping(
                "mintrec", {"mode": "mirror", "mirror": str(tmp_path / "mirror"), "splits": ["train", "dev"]}
            ),
        )


def test_a_file_without_public_link_asks_for_the_manual_step(tmp_path):
    with pytest.raises(ManualStepRequired) as err:
        acquire(get_source("hateful_memes"), tmp_path, SourceOptions(splits=("train",)))
    msg = str(err.value)
    assert (
        "train.jsonl is not under" in msg
        and "Accept the dataset licence" in msg
        and "https://ai.meta.com/tools/hatefulmemes/" in msg
    )


def test_manual_mode_names_where_a_public_file_is_not_the_sources_media_steps(tmp_path):
    """Issue 33, class 9: MMSD2.0's manual text is about its images; its JSON files have public links."""
    with pytest.raises(ManualStepRequired) as err:
        acquire(get_source("mmsd2"), tmp_path, SourceOptions(mode="manual", splits=("train",)))
    msg = str(err.value)
    assert "train.json is not under" in msg and "or acquire it with --mode download" in msg
    assert "(it is at https://raw.githubusercontent.com/" in msg and "images" not in msg


def test_manual_mode_accepts_files_put_there_by_hand(tmp_path):
    (tmp_path / "train.jsonl").write_text(
        '{"id": 42953, "img": "img/42953.png", "label": 0, "text": "its their character"}\n'
    )
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "42953.png").write_bytes(b"png")
    manifest = acquire(
        get_source("hateful_memes"), tmp_path, SourceOptions(mode="manual", splits=("train",), media=True)
    )
    assert [f["relpath"] for f in manifest["files"]] == ["img", "train.jsonl"]
    assert manifest["files"][0]["files"] == 1


def test_the_manifest_has_the_same_bytes_on_a_rerun(server, tmp_path):
    source = served_mustard(server, json.dumps(MUSTARD).encode())
    acquire(source, tmp_path, SourceOptions(), backoff=0)
    first = (tmp_path / MANIFEST).read_bytes()
    acquire(source, tmp_path, SourceOptions(), backoff=0)
    assert (tmp_path / MANIFEST).read_bytes() == first
    assert len(server.requests_for("/MUStARD/data/sarcasm_data.json")) == 1  # verified, not fetched again


def test_unknown_source_options_are_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"moca.sources.mustard: unknown key\(s\) mirorr"):
        SourceOptions.from_mapping("mustard", {"mirorr": "x"})


def test_mirror_mode_without_a_folder_is_refused():
    with pytest.raises(ConfigError, match="mode mirror needs `mirror: <folder>`"):
        SourceOptions.from_mapping("mustard", {"mode": "mirror"})


def test_an_unknown_split_is_refused_naming_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown split\(s\) validation \(this source has train, valid, test\)"):
        get_source("mmsd2").selected(SourceOptions(splits=("validation",)))


def candidate_records():
    return [
        candidate(
            "mmsd2",
            "1",
            split="valid",
            modality="image_text",
            text="so fun",
            media=["a.jpg"],
            origin_file="valid.json",
            origin_record="1",
        )
    ]


def test_a_valid_candidate_passes_the_schema():
    validate_candidates(candidate_records(), "pool.jsonl")


def test_a_bad_modality_names_the_record_and_field():
    recs = candidate_records()
    recs[0]["modality"] = "audio"
    with pytest.raises(DataError, match=r"pool.jsonl, record mmsd2:1, field 'modality': failed isin"):
        validate_candidates(recs, "pool.jsonl")


def test_a_candidate_field_that_is_not_in_the_schema_is_refused():
    recs = candidate_records()
    recs[0]["label"] = 1
    with pytest.raises(DataError, match=r"record mmsd2:1, field 'label': not a candidate field"):
        validate_candidates(recs, "pool.jsonl")


def test_two_records_with_one_id_are_refused():
    recs = candidate_records() * 2
    with pytest.raises(DataError, match="duplicate id"):
        validate_candidates(recs, "pool.jsonl")
