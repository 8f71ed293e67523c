"""Frames taken from a video (one ffmpeg process): exactly the frames asked for with their times, the same
bytes with and without seeking, scaled, upright; AVIs with B-frames too."""

import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from PIL import Image

from socialbench.core.hashing import sha256_file
from socialbench.media import errors as E
from socialbench.media import frames as frames_module
from socialbench.media.errors import MediaError
from socialbench.media.frames import extract_frames
from socialbench.media.probe import video_timeline
from socialbench.media.sampling import fps_indices, plan_segments, uniform_indices
from tests.helpers.media_synth import generate_indexed_video
from tests.media.conftest import (
    AVI_FPS,
    AVI_FRAMES,
    CLIP_FPS,
    CLIP_FRAMES,
    image_index,
)


def test_uniform_frames_are_exactly_the_chosen_frames_with_their_timestamps(clip_mp4, tmp_path):
    tl = video_timeline(clip_mp4)
    idx = uniform_indices(tl.frame_count, 8)
    frames = extract_frames(tl, idx, tmp_path)
    assert [f.index for f in frames] == idx == [3, 9, 15, 21, 28, 34, 40, 46]
    assert [image_index(f.file) for f in frames] == idx
    assert [f.time for f in frames] == [Fraction(i, CLIP_FPS) for i in idx]


def test_uniform_frames_from_matroska_are_exact(clip_mkv, tmp_path):
    tl = video_timeline(clip_mkv)
    frames = extract_frames(tl, uniform_indices(tl.frame_count, 5), tmp_path)
    assert [image_index(f.file) for f in frames] == [5, 15, 25, 35, 45]


def test_frames_of_a_file_starting_before_its_video_are_exact(preroll_mkv, tmp_path):
    tl = video_timeline(preroll_mkv)
    assert tl.file_start < 0 and tl.times[0] == 0
    frames = extract_frames(tl, [3, 26, 49], tmp_path)
    assert [image_index(f.file) for f in frames] == [3, 26, 49]


def test_fps_frames_of_variable_frame_rate_video_carry_the_real_timestamps(vfr_mkv, tmp_path):
    tl = video_timeline(vfr_mkv)
    assert tl.times[20] == Fraction(3)  # after the 1.1 s gap
    idx = fps_indices(list(tl.times), tl.end, Fraction(2))
    frames = extract_frames(tl, idx, tmp_path)
    assert [image_index(f.file) for f in frames] == idx == [0, 5, 10, 15, 19, 20, 25]
    assert [float(f.time) for f in frames] == [0.0, 0.5, 1.0, 1.5, 1.9, 3.0, 3.5]


def test_frames_are_scaled_to_the_longest_side_keeping_aspect(clip_mp4, tmp_path):
    tl = video_timeline(clip_mp4)
    (frame,) = extract_frames(tl, [7], tmp_path, max_side=80)
    with Image.open(frame.file) as im:
        assert im.size == (80, 60)
    assert image_index(frame.file) == 7


def test_frames_of_a_rotated_video_are_upright(media_dir, tmp_path):
    path = generate_indexed_video(media_dir / "rotated-frames.mp4", frames=5, fps=5, rotation=90)
    (frame,) = extract_frames(video_timeline(path), [2], tmp_path)
    with Image.open(frame.file) as im:
        assert im.size == (120, 160)


def test_jpg_frames_are_written_when_asked(clip_mp4, tmp_path):
    (frame,) = extract_frames(video_timeline(clip_mp4), [12], tmp_path, image_format="jpg")
    assert frame.file.suffix == ".jpg" and image_index(frame.file) == 12


def test_all_frames_come_from_one_ffmpeg_process(clip_mp4, tmp_path, monkeypatch):
    tl = video_timeline(clip_mp4)
    started = []
    real_run = subprocess.run

    def counting_run(args, *a, **kw):
        started.append(Path(args[0]).name)
        return real_run(args, *a, **kw)

    monkeypatch.setattr(subprocess, "run", counting_run)
    extract_frames(tl, list(range(0, 50, 2)), tmp_path)
    assert started == ["ffmpeg"]


def test_seeking_to_keyframes_gives_the_same_bytes_as_decoding_from_the_start(clip_mp4, tmp_path, monkeypatch):
    monkeypatch.setattr(frames_module, "SEEK_COST_PIXELS", 1)  # seek over any gap, however short
    tl = video_timeline(clip_mp4)
    assert tl.keyframes[:3] == (0, 12, 24)
    assert len(plan_segments([3, 40], tl.keyframes)) == 2  # frames 4..35 need not be decoded
    sought = extract_frames(tl, [3, 40], tmp_path / "seek")
    decoded = extract_frames(tl, [3, 40], tmp_path / "full", seek=False)
    assert [image_index(f.file) for f in sought] == [3, 40]
    assert [sha256_file(f.file) for f in sought] == [sha256_file(f.file) for f in decoded]


def test_a_seek_that_lands_elsewhere_falls_back_to_decoding_from_the_start(clip_mp4, tmp_path, monkeypatch):
    monkeypatch.setattr(frames_module, "SEEK_COST_PIXELS", 1)
    tl = video_timeline(clip_mp4)
    calls = []
    real = frames_module._extract_segments

    def first_call_misses(timeline, segments, *args):
        calls.append(segments)
        if len(calls) == 1:
            raise MediaError(timeline.path, E.DECODE_MISMATCH, "simulated")
        return real(timeline, segments, *args)

    monkeypatch.setattr(frames_module, "_extract_segments", first_call_misses)
    frames = extract_frames(tl, [3, 40], tmp_path)
    assert [len(c) for c in calls] == [2, 1] and calls[1][0].first == 0
    assert [image_index(f.file) for f in frames] == [3, 40]


def test_a_small_video_is_decoded_through_a_short_gap_instead_of_opening_another_input(clip_mp4, tmp_path, monkeypatch):
    tl = video_timeline(clip_mp4)
    assert frames_module.seek_cost(tl) > 40 - 24  # 160x120: seeking to 40's keyframe saves too little
    calls = []
    real = frames_module._extract_segments

    def recording(timeline, segments, *args):
        calls.append(segments)
        return real(timeline, segments, *args)

    monkeypatch.setattr(frames_module, "_extract_segments", recording)
    frames = extract_frames(tl, [3, 40], tmp_path)
    assert [len(c) for c in calls] == [1]
    assert [image_index(f.file) for f in frames] == [3, 40]


def test_extracting_twice_gives_identical_bytes(clip_mp4, tmp_path):
    tl = video_timeline(clip_mp4)
    a = extract_frames(tl, [1, 30], tmp_path / "a")
    b = extract_frames(tl, [1, 30], tmp_path / "b")
    assert [sha256_file(f.file) for f in a] == [sha256_file(f.file) for f in b]


def test_unsorted_or_out_of_range_indices_are_rejected(clip_mp4, tmp_path):
    tl = video_timeline(clip_mp4)
    with pytest.raises(ValueError, match="ascending"):
        extract_frames(tl, [5, 3], tmp_path)
    with pytest.raises(ValueError, match="ascending"):
        extract_frames(tl, [CLIP_FRAMES], tmp_path)


AVI_TARGETS = [0, 1, 40, 98, 99, 100, 101, 102, 250, 299, 300, 398, 399]


def test_frames_of_an_avi_with_b_frames_are_exactly_the_frames_asked_for(bframes_avis, tmp_path, monkeypatch):
    monkeypatch.setattr(frames_module, "SEEK_COST_PIXELS", 1)  # seek to every keyframe it can
    tl = video_timeline(bframes_avis[0])
    assert len(plan_segments(AVI_TARGETS, tl.keyframes)) >= 4
    frames = extract_frames(tl, AVI_TARGETS, tmp_path)
    assert [image_index(f.file) for f in frames] == AVI_TARGETS
    assert [f.time for f in frames] == [Fraction(i, AVI_FPS) for i in AVI_TARGETS]


def test_frames_of_an_avi_with_b_frames_are_the_same_bytes_with_and_without_seeking(
    bframes_avis, tmp_path, monkeypatch
):
    monkeypatch.setattr(frames_module, "SEEK_COST_PIXELS", 1)
    tl = video_timeline(bframes_avis[0])
    sought = extract_frames(tl, AVI_TARGETS, tmp_path / "seek")
    decoded = extract_frames(tl, AVI_TARGETS, tmp_path / "full", seek=False)
    assert [image_index(f.file) for f in decoded] == AVI_TARGETS
    assert [sha256_file(f.file) for f in sought] == [sha256_file(f.file) for f in decoded]


def test_fps_frames_of_an_avi_with_b_frames_fall_on_the_sampling_times(bframes_avis, tmp_path):
    tl = video_timeline(bframes_avis[0])
    indices = fps_indices(tl.times, tl.end, Fraction(1, 2))
    assert indices == list(range(0, AVI_FRAMES, 50))
    assert [image_index(f.file) for f in extract_frames(tl, indices, tmp_path)] == indices


def test_an_avi_frame_seek_that_lands_on_another_keyframe_falls_back_to_decoding_from_the_start(
    bframes_avis, tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr(frames_module, "SEEK_COST_PIXELS", 1)
    # without ffmpeg's back-off added, its seek lands on the keyframe before the one wanted
    monkeypatch.setattr(frames_module, "DTS_SEEK_BACKOFF", Fraction(0))
    tl = video_timeline(bframes_avis[0])
    frames = extract_frames(tl, [5, 201, 305], tmp_path)
    assert [image_index(f.file) for f in frames] == [5, 201, 305]
    assert "decoding from the start instead" in caplog.text
