"""Clips per candidate (socialbench.meetingtom.dataset.clips): synchronized views named by participant, the
labelled mosaic, audio, transcript and 0.5 FPS frames, all of the same window; bad media reported."""

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from socialbench.media.errors import MediaError
from socialbench.media.settings import MediaSettings
from socialbench.meetingtom.dataset.clips import clip_dir_name, make_clips, transcript_window, view_plan
from socialbench.meetingtom.dataset.demo_script import COLOURS, plan_meeting


def decoded(path: Path) -> np.ndarray:
    """Every frame of a video as RGB (the test's own full decode, no seeking)."""
    from socialbench.core.tools import executable
    from socialbench.media.probe import probe

    info = probe(path)
    w, h = info.display_size
    out = subprocess.run(
        [executable("ffmpeg"), "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(out, np.uint8).reshape(-1, h, w, 3)


def test_close_ups_are_named_by_participant_through_their_cameras():
    participants = {
        "A": {"camera": "Closeup3"},
        "B": {"camera": "Closeup1"},
        "C": {"camera": "Closeup4"},
        "D": {"camera": "Closeup2"},
    }
    views = {v: {"path": f"{v}.avi"} for v in ("Corner", "Closeup1", "Closeup2", "Closeup3", "Closeup4", "Mix-Headset")}
    plan = view_plan(participants, {"views": views})
    assert plan["videos"] == [
        ("corner", "Corner.avi"),
        ("closeup_A", "Closeup3.avi"),
        ("closeup_B", "Closeup1.avi"),
        ("closeup_C", "Closeup4.avi"),
        ("closeup_D", "Closeup2.avi"),
    ]
    assert plan["mosaic"] == ["closeup_A", "closeup_B", "closeup_C", "closeup_D"] and plan["audio"] == "Mix-Headset.avi"


def test_without_four_close_ups_there_is_no_mosaic():
    plan = view_plan({"A": {"camera": "Closeup1"}}, {"views": {"Closeup1": {"path": "c1.avi"}}})
    assert plan["videos"] == [("closeup_A", "c1.avi")] and plan["mosaic"] is None and plan["audio"] is None


def test_the_transcript_window_is_relative_to_the_clip_start():
    words = [
        {"speaker": "A", "start": 9.0, "end": 9.4, "text": "early"},
        {"speaker": "A", "start": 10.2, "end": 10.5, "text": "Hi"},
        {"speaker": "A", "start": 10.6, "end": 10.9, "text": "there"},
        {"speaker": "B", "start": 11.5, "end": 11.8, "text": "Yes"},
    ]
    w = transcript_window(words, 10.0, 20.0, gap=1.0)
    assert w["text"] == "[0.20-0.90] A: Hi there\n[1.50-1.80] B: Yes"


def test_candidate_ids_become_safe_folder_names():
    assert clip_dir_name("you:ES2002a.B.you.3") == "you_ES2002a.B.you.3"


def test_each_you_window_gets_a_clip_with_every_view(demo_clips, demo_extract):
    recs = demo_clips["records"]
    assert [r["id"] for r in recs] == sorted(c["id"] for c in demo_extract["candidates.jsonl"] if c["task"] == "you")
    assert set(recs[0]["videos"]) == {"corner", "closeup_A", "closeup_B", "closeup_C", "closeup_D", "mosaic"}
    assert recs[0]["audio"] is not None and demo_clips["summary"] == {"clips": 2, "failed": 0, "note": None}


def test_every_view_starts_on_the_windows_first_frame(demo_clips, demo_cfg):
    from socialbench.media.synth import read_index

    rec = demo_clips["records"][0]
    first = math.ceil(rec["start"] * demo_cfg.fps)
    for name in ("corner", "closeup_A", "closeup_D"):
        frames = decoded(demo_clips["root"] / rec["videos"][name]["path"])
        assert read_index(frames[0]) == first, name
        assert len(frames) == math.ceil(rec["end"] * demo_cfg.fps) - first


def test_a_close_up_clip_shows_its_participant(demo_clips, demo_cfg):
    rec = demo_clips["records"][0]
    for letter in "ABCD":
        frame = decoded(demo_clips["root"] / rec["videos"][f"closeup_{letter}"]["path"])[0]
        expected = np.array([c // 3 + 40 for c in COLOURS[letter]])
        assert np.abs(frame[2, 2].astype(int) - expected).max() <= 8, letter


def test_the_mosaic_panels_are_the_close_ups_in_letter_order(demo_clips):
    rec = demo_clips["records"][0]
    m = decoded(demo_clips["root"] / rec["videos"]["mosaic"]["path"])[0]
    h, w = m.shape[0] // 2, m.shape[1] // 2
    for letter, (y, x) in zip("ABCD", [(0, 0), (0, w), (h, 0), (h, w)]):
        pixel = m[y + h - 20, x + 3].astype(int)  # below the label, left of the face
        expected = np.array([c // 3 + 40 for c in COLOURS[letter]])
        assert np.abs(pixel - expected).max() <= 10, letter


def test_frames_are_sampled_every_two_seconds_of_every_video(demo_clips):
    rec = demo_clips["records"][0]
    assert rec["fps"] == 0.5
    for name, frames in rec["frames"].items():
        assert [f["timestamp"] for f in frames] == [float(2 * k) for k in range(25)], name
        assert all((demo_clips["root"] / f["path"]).is_file() for f in frames)


def test_audio_and_transcript_cover_the_same_window(demo_clips, demo_extract):
    import wave

    rec = demo_clips["records"][0]
    with wave.open(str(demo_clips["root"] / rec["audio"]["path"])) as wf:
        assert wf.getnframes() == 50 * wf.getframerate()
    t = json.loads((demo_clips["root"] / rec["transcript"]["path"]).read_text())
    assert (t["start"], t["end"]) == (rec["start"], rec["end"])
    assert all(0 <= i["start"] <= i["end"] <= 50 for i in t["items"])


def test_the_frame_cache_keeps_no_bookkeeping(demo_clips):
    assert (
        not (demo_clips["out"] / "frames" / ".locks").exists() and not (demo_clips["out"] / "frames" / ".tmp").exists()
    )


def test_a_video_shorter_than_the_annotations_is_reported_per_window(tmp_path, demo_extract, demo_mirror):
    from socialbench.media.clips import cut_views
    from socialbench.meetingtom.dataset.release import fetch_meeting_media
    from tests.meetingtom.conftest import source_for

    fetched = fetch_meeting_media(source_for(demo_mirror), "ES9000a", tmp_path / "raw")
    short = tmp_path / "raw" / fetched["views"]["Corner"]["path"]
    cut_views([short], 0, 80, [tmp_path / "short.mp4"])  # the Corner view ends at 80 s, the annotations at 110 s
    short.unlink()
    (tmp_path / "short.mp4").rename(short)
    m = demo_extract
    summary = make_clips(
        m["meeting.json"],
        m["candidates.jsonl"],
        m["words.jsonl"],
        fetched,
        tmp_path / "clips",
        tasks=["you"],
        settings=MediaSettings(),
        root=tmp_path,
    )
    report = [json.loads(x) for x in (tmp_path / "clips" / "report.jsonl").read_text().splitlines()]
    assert summary["clips"] == 0 and summary["failed"] == 2
    assert {(r["meeting"], r["path"], r["action"]) for r in report} == {("ES9000a", str(short), "no clip")}
    assert {r["problem"] for r in report} <= {"view_length_mismatch", "window_beyond_end"}
    assert not any((tmp_path / "clips" / clip_dir_name(r["id"])).exists() for r in report)


def test_with_on_error_fail_the_first_bad_clip_stops_after_the_report(tmp_path, demo_extract):
    fetched = {"root": str(tmp_path), "views": {"Corner": {"path": "missing.avi"}}}
    m = demo_extract
    with pytest.raises(MediaError):
        make_clips(
            m["meeting.json"],
            m["candidates.jsonl"],
            m["words.jsonl"],
            fetched,
            tmp_path / "clips",
            tasks=["you"],
            settings=MediaSettings(on_error="fail"),
            root=tmp_path,
        )
    assert (tmp_path / "clips" / "report.jsonl").read_text().count("\n") == 1


def test_a_meeting_without_videos_gets_no_clips_and_says_why(tmp_path, demo_extract):
    m = demo_extract
    summary = make_clips(
        m["meeting.json"],
        m["candidates.jsonl"],
        m["words.jsonl"],
        {"views": {}, "note": "no views requested"},
        tmp_path / "clips",
        tasks=["you"],
        settings=MediaSettings(),
    )
    assert summary == {"clips": 0, "failed": 0, "note": "no views requested"}
    assert (tmp_path / "clips" / "clips.jsonl").read_text() == ""


def test_the_demo_scripts_close_up_letters_match_the_clip_names(demo_cfg):
    s = plan_meeting("ES9000a", demo_cfg)
    assert {p.letter for p in s.participants} == set("ABCD")


def test_a_view_path_leaving_the_fetched_root_is_refused_before_any_clip(tmp_path, demo_extract):
    from socialbench.core.errors import DataError

    (tmp_path / "media").mkdir()
    fetched = {"root": str(tmp_path / "media"), "views": {"Corner": {"path": "../outside.avi"}}}
    m = demo_extract
    with pytest.raises(
        DataError, match=r"^f.json, record views of corner, field 'path': video ../outside.avi leads to"
    ):
        make_clips(
            m["meeting.json"],
            m["candidates.jsonl"],
            m["words.jsonl"],
            fetched,
            tmp_path / "clips",
            tasks=["you"],
            settings=MediaSettings(),
            root=tmp_path,
            source="f.json",
        )
    assert not list((tmp_path / "clips").glob("*/"))
