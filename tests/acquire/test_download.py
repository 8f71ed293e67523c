"""download(): resumable, retried, verified, atomic and idempotent, against a loopback server."""

from __future__ import annotations

import hashlib
import json
import logging
import socket
from pathlib import Path

import pytest

import socialbench.acquire.download as dl
from socialbench.acquire.download import ChecksumMismatch, DownloadError, copy_local, download
from socialbench.core.errors import DataError, SocialbenchError

FAST = {"backoff": 0.0, "timeout": 5.0, "chunk_size": 16_384}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def part_of(dest: Path) -> Path:
    return dest.with_name(dest.name + ".part")


def test_plain_download_is_byte_identical_and_leaves_no_part(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    dest = tmp_path / "sub" / "f.bin"
    assert download(url, dest, sha256=sha(payload), **FAST) == dest
    assert dest.read_bytes() == payload
    assert not part_of(dest).exists()


def test_dropped_connection_is_resumed_with_a_range_request(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    server.fault("/f.bin", "drop")
    dest = tmp_path / "f.bin"
    download(url, dest, sha256=sha(payload), **FAST)
    assert dest.read_bytes() == payload
    first, second = server.requests_for("/f.bin")
    assert "Range" not in first.headers
    assert second.headers["Range"] == f"bytes={len(payload) // 2}-"
    assert second.status == 206


def test_server_error_then_success_is_retried(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    server.fault("/f.bin", 500)
    dest = tmp_path / "f.bin"
    download(url, dest, sha256=sha(payload), **FAST)
    assert dest.read_bytes() == payload
    assert [r.status for r in server.requests_for("/f.bin")] == [500, 200]


def test_retries_back_off_exponentially(server, payload, tmp_path, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(dl, "_sleep", slept.append)
    url = server.add("/f.bin", payload)
    server.fault("/f.bin", 503, 500, 502)
    download(url, tmp_path / "f.bin", **{**FAST, "backoff": 0.5})
    assert slept == [0.5, 1.0, 2.0]


def test_timeout_is_retried(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    server.slow_s = 1.5
    server.fault("/f.bin", "slow")
    dest = tmp_path / "f.bin"
    download(url, dest, sha256=sha(payload), **{**FAST, "timeout": 0.5})
    assert dest.read_bytes() == payload
    assert len(server.requests_for("/f.bin")) == 2


def test_server_ignoring_range_restarts_the_file_cleanly(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    server.fault("/f.bin", "ignore-range")
    dest = tmp_path / "f.bin"
    part_of(dest).write_bytes(b"garbage from an older attempt" * 100)
    download(url, dest, sha256=sha(payload), **FAST)
    assert dest.read_bytes() == payload
    (req,) = server.requests_for("/f.bin")
    assert req.headers["Range"].startswith("bytes=") and req.status == 200


def test_wrong_bytes_raise_checksum_error_and_leave_no_file(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    server.fault("/f.bin", "wrong")
    dest = tmp_path / "f.bin"
    with pytest.raises(ChecksumMismatch) as info:
        download(url, dest, sha256=sha(payload), **FAST)
    message = str(info.value)
    wrong = bytes(b ^ 0xFF for b in payload)
    assert url in message and sha(payload) in message and sha(wrong) in message
    assert "\n" not in message
    assert isinstance(info.value, DataError)
    assert not dest.exists()
    assert not part_of(dest).exists()


def test_after_a_checksum_error_the_next_download_starts_from_scratch(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    server.fault("/f.bin", "wrong")
    dest = tmp_path / "f.bin"
    with pytest.raises(ChecksumMismatch):
        download(url, dest, sha256=sha(payload), **FAST)
    download(url, dest, sha256=sha(payload), **FAST)
    assert dest.read_bytes() == payload
    assert "Range" not in server.requests_for("/f.bin")[-1].headers


def test_stale_part_of_another_version_is_discarded_after_a_mismatch(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    dest = tmp_path / "f.bin"
    part_of(dest).write_bytes(b"\0" * 1000)  # resumable, but not a prefix of this file
    download(url, dest, sha256=sha(payload), **FAST)
    assert dest.read_bytes() == payload
    first, second = server.requests_for("/f.bin")
    assert first.headers["Range"] == "bytes=1000-" and "Range" not in second.headers


def test_complete_part_left_by_a_killed_run_is_finished_without_refetching(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    dest = tmp_path / "f.bin"
    part_of(dest).write_bytes(payload)
    download(url, dest, sha256=sha(payload), **FAST)
    assert dest.read_bytes() == payload
    assert [r.status for r in server.requests_for("/f.bin")] == [416]


def test_existing_file_with_right_checksum_is_not_downloaded_again(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    dest = tmp_path / "f.bin"
    download(url, dest, sha256=sha(payload), **FAST)
    download(url, dest, sha256=sha(payload), **FAST)
    assert len(server.requests_for("/f.bin")) == 1


def test_existing_file_without_checksum_is_not_downloaded_again(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    dest = tmp_path / "f.bin"
    download(url, dest, **FAST)
    download(url, dest, **FAST)
    assert len(server.requests_for("/f.bin")) == 1


def test_existing_file_with_wrong_checksum_is_replaced(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    dest = tmp_path / "f.bin"
    dest.write_bytes(b"old version")
    download(url, dest, sha256=sha(payload), **FAST)
    assert dest.read_bytes() == payload


def test_not_found_is_not_retried_and_names_the_url(server, tmp_path):
    url = server.url("/missing.bin")
    with pytest.raises(DownloadError, match=r"/missing\.bin: HTTP 404"):
        download(url, tmp_path / "m.bin", **FAST)
    assert len(server.requests_for("/missing.bin")) == 1
    assert not (tmp_path / "m.bin").exists()


def test_retries_exhausted_is_a_one_line_error_naming_the_url(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/f.bin"  # nothing listens there
    with pytest.raises(DownloadError) as info:
        download(url, tmp_path / "f.bin", retries=2, **FAST)
    message = str(info.value)
    assert message.startswith(url + ": giving up after 3 failed attempts")
    assert "\n" not in message
    assert isinstance(info.value, SocialbenchError)


def test_drops_without_progress_give_up_but_keep_the_part(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    server.fault("/f.bin", *["drop+ignore-range"] * 5)  # every try restarts and stops half-way
    dest = tmp_path / "f.bin"
    with pytest.raises(DownloadError, match="giving up after 3 failed attempts"):
        download(url, dest, retries=2, **FAST)
    assert len(server.requests_for("/f.bin")) == 3
    assert not dest.exists()
    assert part_of(dest).stat().st_size == len(payload) // 2


def test_drops_that_make_progress_do_not_use_up_the_retries(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    server.fault("/f.bin", *["drop"] * 5)
    dest = tmp_path / "f.bin"
    download(url, dest, sha256=sha(payload), retries=1, **FAST)
    assert dest.read_bytes() == payload
    assert len(server.requests_for("/f.bin")) == 6


def test_credentials_are_sent_but_never_shown(server, payload, tmp_path, caplog):
    server.add("/f.bin", payload)
    url = server.url("/f.bin").replace("http://", "http://alice:s3cret@")
    caplog.set_level(logging.DEBUG, logger="socialbench.acquire")
    download(url, tmp_path / "f.bin", **FAST)
    assert server.requests_for("/f.bin")[0].headers["Authorization"].startswith("Basic ")
    assert "s3cret" not in caplog.text
    bad = server.url("/missing").replace("http://", "http://alice:s3cret@")
    with pytest.raises(DownloadError) as info:
        download(bad, tmp_path / "m.bin", **FAST)
    assert "s3cret" not in str(info.value) and "***@127.0.0.1" in str(info.value)


def test_file_url_mirror_is_copied_and_verified(tmp_path, payload):
    src = tmp_path / "mirror" / "f.bin"
    src.parent.mkdir()
    src.write_bytes(payload)
    dest = tmp_path / "out" / "f.bin"
    download(src.as_uri(), dest, sha256=sha(payload))
    assert dest.read_bytes() == payload


def test_plain_path_mirror_with_wrong_checksum_leaves_no_file(tmp_path, payload):
    src = tmp_path / "f.bin"
    src.write_bytes(payload)
    dest = tmp_path / "out" / "f.bin"
    with pytest.raises(ChecksumMismatch, match=str(src)):
        copy_local(src, dest, sha256="0" * 64)
    assert not dest.exists() and not part_of(dest).exists()


def test_missing_mirror_file_is_a_data_error_naming_it(tmp_path):
    missing = tmp_path / "mirror" / "nope.avi"
    with pytest.raises(DataError, match=rf"^{missing}: mirror file does not exist"):
        download(str(missing), tmp_path / "out.avi")


def test_unsupported_scheme_is_refused(tmp_path):
    with pytest.raises(DownloadError, match="unsupported URL scheme 'ftp'"):
        download("ftp://example.org/f.bin", tmp_path / "f.bin")


def test_malformed_checksum_is_refused_before_fetching(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    with pytest.raises(SocialbenchError, match="not 64 hexadecimal digits"):
        download(url, tmp_path / "f.bin", sha256="abc")
    assert server.requests == []


# ---- trust on first use (issue 20, point 2) -----------------------------------------------------------
def test_an_unpinned_download_is_recorded_on_first_use_and_checked_later(server, payload, tmp_path):
    trust = dl.TrustStore(tmp_path / "sources.lock")
    url = server.add("/f.bin", payload)
    assert dl.verification(url, None, trust) == "first use"
    download(url, tmp_path / "f.bin", trust=trust, **FAST)
    assert trust.recorded(url) == sha(payload) and dl.verification(url, None, trust) == "recorded"
    server.add("/f.bin", payload[::-1])  # the file changed upstream
    with pytest.raises(ChecksumMismatch, match=r"recorded on first use in .*sources.lock: the file changed since"):
        download(url, tmp_path / "again.bin", trust=trust, **FAST)
    assert not (tmp_path / "again.bin").exists()


def test_a_first_use_is_recorded_as_recorded_and_logged_as_a_warning(server, payload, tmp_path, caplog):
    """Issue 33, class 8: versioned outputs state the check as it stands after the run; the first use is logged."""
    trust = dl.TrustStore(tmp_path / "sources.lock")
    url = server.add("/f.bin", payload)
    assert dl.recorded_verification(dl.verification(url, None, trust)) == "recorded"
    download(url, tmp_path / "f.bin", trust=trust, **FAST)
    assert dl.recorded_verification(dl.verification(url, None, trust)) == "recorded"
    assert "no sha256 pinned; " + sha(payload) + " recorded on first use in" in caplog.text
    assert [dl.recorded_verification(how) for how in ("pinned", "none")] == ["pinned", "none"]


def test_a_changed_mirror_file_is_refused_against_its_recorded_hash(tmp_path):
    trust = dl.TrustStore(tmp_path / "sources.lock")
    src = tmp_path / "mirror.bin"
    src.write_bytes(b"first")
    copy_local(src, tmp_path / "a.bin", trust=trust)
    src.write_bytes(b"second")
    with pytest.raises(ChecksumMismatch, match="recorded on first use"):
        copy_local(src, tmp_path / "b.bin", trust=trust)


def test_a_changed_mirror_file_is_refused_however_its_path_is_spelled(tmp_path, monkeypatch):
    """Issue 38: the lock keys a mirror file by where it resolves, so spelling it relatively after an
    absolute first use (or through ``..``, or as a file:// URL) is no new first use."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "shared").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    trust = dl.TrustStore("sources.lock")
    src = tmp_path / "shared" / "ann.zip"
    src.write_bytes(b"first")
    copy_local(str(src), tmp_path / "a.bin", trust=trust)  # absolute: recorded
    src.write_bytes(b"changed")
    for spelling in ("../shared/ann.zip", "../repo/../shared/ann.zip", src.as_uri()):
        with pytest.raises(ChecksumMismatch, match="recorded on first use"):
            copy_local(spelling, tmp_path / "b.bin", trust=trust)
    assert json.loads(Path("sources.lock").read_text()) == {"file:../shared/ann.zip": sha(b"first")}


def test_an_entry_written_as_the_path_was_spelled_still_holds(tmp_path, monkeypatch):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "ann.zip").write_bytes(b"changed")
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    Path("sources.lock").write_text(json.dumps({f"file:{tmp_path}/shared/ann.zip": sha(b"first")}))
    with pytest.raises(ChecksumMismatch, match="recorded on first use"):
        copy_local("../shared/ann.zip", tmp_path / "b.bin", trust=dl.TrustStore("sources.lock"))


def test_two_entries_naming_one_file_with_different_hashes_are_refused(tmp_path, monkeypatch):
    (tmp_path / "shared").mkdir()
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    entries = {"file:../shared/ann.zip": "a" * 64, f"file:{tmp_path}/shared/ann.zip": "b" * 64}
    Path("sources.lock").write_text(json.dumps(entries))
    with pytest.raises(DataError, match=r"sources.lock, field .*names the file of '.*' again .* another sha256"):
        dl.TrustStore("sources.lock").recorded("../shared/ann.zip")


def test_credentials_and_query_strings_never_reach_the_lock_file(tmp_path):
    key = dl.TrustStore.key("https://user:secret@host/a.zip?token=abc")
    assert "secret" not in key and "abc" not in key and key.startswith("https://host/a.zip?sha256:")


def test_a_pinned_hash_needs_no_record_and_a_file_without_either_says_none(tmp_path):
    trust = dl.TrustStore(tmp_path / "sources.lock")
    assert dl.verification("https://h/a.zip", "0" * 64, trust) == "pinned"
    assert dl.verification("https://h/a.zip", None, None) == "none"


def test_a_lock_file_that_is_not_a_mapping_of_hashes_is_named(tmp_path):
    (tmp_path / "sources.lock").write_text('{"https://h/a.zip": "nope"}')
    with pytest.raises(DataError, match=r"sources.lock, field 'https://h/a.zip': not a sha256"):
        dl.TrustStore(tmp_path / "sources.lock").recorded("https://h/a.zip")


# ---- a .part file that is a link is replaced, never written through (issue 20) ------------------------
def test_a_download_never_writes_through_a_part_file_that_is_a_link(server, payload, tmp_path):
    url = server.add("/f.bin", payload)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    dest = tmp_path / "d" / "f.bin"
    dest.parent.mkdir()
    part_of(dest).symlink_to(victim)
    download(url, dest, sha256=sha(payload), **FAST)
    assert victim.read_bytes() == b"keep me"
    assert dest.read_bytes() == payload and not dest.is_symlink()


def test_a_mirror_copy_never_writes_through_a_part_file_that_is_a_link(tmp_path, payload):
    mirror = tmp_path / "mirror.bin"
    mirror.write_bytes(payload)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    dest = tmp_path / "d" / "f.bin"
    dest.parent.mkdir()
    part_of(dest).symlink_to(victim)
    copy_local(mirror, dest, sha256=sha(payload))
    assert victim.read_bytes() == b"keep me" and dest.read_bytes() == payload


def test_a_link_put_in_place_of_the_part_file_after_the_check_is_refused(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    (tmp_path / "f.bin.part").symlink_to(victim)
    with pytest.raises(DownloadError, match=r"f\.bin\.part: is a symbolic link"):
        dl._open_part(tmp_path / "f.bin.part", "ab")
    assert victim.read_bytes() == b"keep me"


def test_a_part_path_that_is_a_folder_is_refused(tmp_path):
    (tmp_path / "f.bin.part").mkdir()
    with pytest.raises(DownloadError, match=r"f\.bin\.part: exists and is not a file"):
        dl._part_path(tmp_path / "f.bin")
