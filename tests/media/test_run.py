import ast
import signal
from pathlib import Path

import pytest

from socialbench.media import errors as E
from socialbench.media.errors import MediaError
from socialbench.media.run import clean_log_line, describe_exit, ffmpeg_failure, ffmpeg_path, last_lines, run_ffmpeg

ROOT = Path(__file__).resolve().parents[2]


def _private_uses_of_media_run(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "socialbench.media.run":
            found += [f"{path}: imports {a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if isinstance(node.value, ast.Name) and node.value.id == "run":
                found.append(f"{path}:{node.lineno}: uses run.{node.attr}")
    return found


def test_no_module_uses_a_private_name_of_media_run():
    files = [p for d in ("src", "tests", "benchmarks", "perf") for p in (ROOT / d).rglob("*.py") if p.is_file()]
    found = [u for p in files if p.name != "run.py" or p.parent.name != "media" for u in _private_uses_of_media_run(p)]
    assert found == []


def test_a_failing_ffmpeg_names_the_file_and_its_last_message(tmp_path):
    with pytest.raises(MediaError) as info:
        run_ffmpeg([ffmpeg_path(), "-hide_banner", "-i", str(tmp_path / "absent.mp4")], "absent.mp4", "reading it")
    assert info.value.problem == E.FFMPEG_FAILED and info.value.path == "absent.mp4"
    assert "failed (exit status" in info.value.detail and "while reading it" in info.value.detail


def test_a_crash_is_described_by_its_signal():
    assert describe_exit(-signal.SIGSEGV) == "crashed (SIGSEGV)"
    assert describe_exit(1) == "failed (exit status 1)"


def test_log_lines_lose_their_memory_addresses():
    assert clean_log_line("[mov,mp4 @ 0x55d2f00b1c40] moov atom not found ") == "moov atom not found"
    assert last_lines(b"a\n\n[h264 @ 0xdeadbeef] b\nc\nd\n", 2) == "c | d"
    assert last_lines(b"") == "no message"


# ---- a full disk (issue 33, class 9): one line naming the output, even when ffmpeg exits 0 ----------------
def test_a_full_disk_is_one_line_naming_the_output_file(tmp_path):
    """/dev/full fails every write with ENOSPC, as a full disk does; ffmpeg still exits 0 here."""
    from socialbench.core.paths import DiskFull

    args = [ffmpeg_path(), "-hide_banner", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=d=1", "-f", "wav", "/dev/full"]
    with pytest.raises(DiskFull) as info:
        run_ffmpeg(args, "sine", "extracting audio", out="/dev/full")
    assert str(info.value) == (
        "/dev/full: no space left on the device; ffmpeg stopped while extracting audio, and nothing of it was kept"
        " (free some space and run again)"
    )


def test_a_full_disk_removes_the_partial_output(tmp_path):
    part = tmp_path / "a.wav"
    part.write_bytes(b"RIFF")
    error = ffmpeg_failure(1, b"[out#0/wav] Error writing trailer: No space left on device\n", "in.mp4", "x", out=part)
    assert type(error).__name__ == "DiskFull" and error.path == str(part) and not part.exists()


def test_a_failure_that_is_not_a_full_disk_stays_a_media_error_naming_the_input():
    error = ffmpeg_failure(1, b"Invalid data found when processing input\n", "in.mp4", "reading it", out="o.wav")
    assert isinstance(error, MediaError) and error.path == "in.mp4" and "Invalid data" in error.detail
