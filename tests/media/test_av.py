import subprocess
import wave
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from socialbench.core.errors import SocialbenchError
from socialbench.core.hashing import sha256_file
from socialbench.core.tools import executable
from socialbench.media import errors as E
from socialbench.media import frames as frames_module
from socialbench.media import probe as probe_module
from socialbench.media.clips import Mosaic, build_mosaic, cut_views, extract_audio
from socialbench.media.encode import EncodeSettings
from socialbench.media.errors import MediaError
from socialbench.media.frames import extract_frames
from socialbench.media.probe import probe, video_timeline
from socialbench.media.sampling import fps_indices, plan_segments, uniform_indices
from socialbench.media.synth import read_index
from tests.helpers.media_synth import decode_all_frames, generate_indexed_video
from tests.media.conftest import AVI_FPS, AVI_FRAMES, CLIP_FPS, CLIP_FRAMES, image_index, video_indices

# -- probing -------------------------------------------------------------------------------------


def test_probe_reports_duration_fps_frames_and_size(clip_mp4):
    info = probe(clip_mp4)
    assert (info.video_duration, info.fps, info.frame_count) == (5.0, Fraction(10), CLIP_FRAMES)
    assert info.frame_count_source == "metadata"
    assert info.display_size == (160, 120) and info.rotation == 0
    assert [s.codec_type for s in info.streams] == ["video"]


def test_probe_counts_frames_of_a_container_without_frame_metadata(clip_mkv):
    info = probe(clip_mkv)
    assert info.video.nb_frames is None
    assert (info.frame_count, info.frame_count_source) == (CLIP_FRAMES, "packets")


def test_probe_lists_audio_streams(five_views):
    info = probe(five_views[0])
    assert info.audio is not None and info.audio.sample_rate == 48000


def test_probe_reports_rotation_and_the_rotated_display_size(media_dir):
    path = generate_indexed_video(media_dir / "rotated.mp4", frames=5, fps=5, rotation=90)
    info = probe(path)
    assert info.rotation in (90, 270) and info.display_size == (120, 160)


def test_timeline_gives_exact_frame_times_in_display_order(clip_mp4):
    tl = video_timeline(clip_mp4)
    assert tl.times == tuple(Fraction(i, CLIP_FPS) for i in range(CLIP_FRAMES))
    assert tl.end == Fraction(5)


# -- frames --------------------------------------------------------------------------------------


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


# -- cuts, mosaic, audio -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def five_view_cut(five_views, tmp_path_factory):
    out = tmp_path_factory.mktemp("cut")
    result = cut_views(
        five_views,
        0.5,
        1.7,
        [out / f"v{i}.mp4" for i in range(5)],
        mosaic=Mosaic(out / "mosaic.mp4", views=(1, 2, 3, 4)),
    )
    return out, result


def test_cut_of_five_views_keeps_exactly_the_frames_of_the_window(five_view_cut):
    out, _ = five_view_cut
    # 25 fps, [0.5, 1.7): frames 13 (0.52 s) .. 42 (1.68 s)
    for i in range(5):
        assert video_indices(out / f"v{i}.mp4") == list(range(13, 43))


def test_cut_reports_equal_frame_counts_for_every_view(five_view_cut):
    _, result = five_view_cut
    assert [v["frames"] for v in result.views] == [30] * 5
    assert result.mosaic["frames"] == 30


def test_mosaic_is_a_2x2_grid_of_the_four_closeups_in_sync(five_view_cut):
    out, result = five_view_cut
    frames = decode_all_frames(out / "mosaic.mp4")
    assert frames.shape[1:] == (240, 320, 3) and (result.mosaic["width"], result.mosaic["height"]) == (320, 240)
    expected = {(0, 0): (255, 0, 0), (0, 1): (0, 128, 0), (1, 0): (0, 0, 255), (1, 1): (255, 255, 0)}
    for k, frame in enumerate(frames):
        for (r, c), colour in expected.items():
            panel = frame[r * 120 : (r + 1) * 120, c * 160 : (c + 1) * 160]
            assert read_index(panel) == 13 + k
            centre = panel[55:65, 75:85].reshape(-1, 3).mean(axis=0)
            assert np.abs(centre - colour).max() < 30


def test_mosaic_panels_carry_distinct_labels_in_the_top_left_corner(five_view_cut):
    out, _ = five_view_cut
    frame = decode_all_frames(out / "mosaic.mp4")[0].astype(int)
    glyphs = []
    for r in range(2):
        for c in range(2):
            panel = frame[r * 120 : (r + 1) * 120, c * 160 : (c + 1) * 160]
            corner, centre = panel[0:24, 0:24], panel[40:80, 40:120]
            white, black = corner.min(axis=2) > 200, corner.max(axis=2) < 50
            assert white.any() and black.any()  # a white glyph on a black box...
            assert not (centre.min(axis=2) > 200).any() and not (centre.max(axis=2) < 50).any()  # ...not in the picture
            glyphs.append(white)
    assert all(not np.array_equal(a, b) for i, a in enumerate(glyphs) for b in glyphs[i + 1 :])  # A, B, C, D differ


def test_mosaic_alone_of_four_closeups(five_views, tmp_path):
    result = build_mosaic(five_views[1:], tmp_path / "m.mp4", start=1.0, end=1.4)
    assert result.views == [] and result.mosaic["frames"] == 10
    assert [read_index(f[:120, :160]) for f in decode_all_frames(tmp_path / "m.mp4")] == list(range(25, 35))


def test_cut_twice_gives_identical_bytes(five_views, tmp_path):
    for name in ("a", "b"):
        cut_views(five_views[:2], 0.2, 1.0, [tmp_path / name / "v0.mp4", tmp_path / name / "v1.mp4"])
    assert sha256_file(tmp_path / "a" / "v0.mp4") == sha256_file(tmp_path / "b" / "v0.mp4")


def test_audio_is_mono_16khz_pcm_of_the_window(five_views, tmp_path):
    result = extract_audio(five_views[0], tmp_path / "a.wav", start=0.5, end=1.7)
    with wave.open(str(tmp_path / "a.wav")) as w:
        assert (w.getnchannels(), w.getframerate(), w.getsampwidth()) == (1, 16000, 2)
        assert w.getnframes() == pytest.approx(1.2 * 16000, abs=2)
    assert result.duration == pytest.approx(1.2, abs=1e-3)


# -- bad media -----------------------------------------------------------------------------------


def truncate(src: Path, dst: Path, fraction: float = 0.5) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * fraction)])
    return dst


def assert_problem(excinfo, problem: str, path: Path) -> None:
    assert excinfo.value.problem == problem
    assert str(path) in str(excinfo.value)


def test_missing_file_is_named(tmp_path):
    path = tmp_path / "nowhere.mp4"
    with pytest.raises(MediaError) as exc:
        probe(path)
    assert_problem(exc, E.MISSING, path)


def test_zero_byte_file_is_reported(tmp_path):
    path = tmp_path / "empty.mp4"
    path.write_bytes(b"")
    with pytest.raises(MediaError) as exc:
        video_timeline(path)
    assert_problem(exc, E.EMPTY, path)


def test_mp4_cut_off_before_its_index_is_truncated(media_dir, tmp_path):
    whole = generate_indexed_video(media_dir / "moov-at-end.mp4", frames=40, fps=10, faststart=False)
    path = truncate(whole, tmp_path / "cut-off.mp4")
    with pytest.raises(MediaError) as exc:
        video_timeline(path)
    assert_problem(exc, E.TRUNCATED, path)


def test_mp4_missing_the_end_of_its_data_is_truncated(clip_mp4, tmp_path):
    path = truncate(clip_mp4, tmp_path / "half.mp4")
    with pytest.raises(MediaError) as exc:
        video_timeline(path)
    assert_problem(exc, E.TRUNCATED, path)
    assert "announces 50 video frames" in str(exc.value)


def test_matroska_that_ends_early_is_truncated(clip_mkv, tmp_path):
    path = truncate(clip_mkv, tmp_path / "half.mkv")
    with pytest.raises(MediaError) as exc:
        video_timeline(path)
    assert_problem(exc, E.TRUNCATED, path)


def test_file_without_a_video_stream_is_reported(five_views, tmp_path):
    path = tmp_path / "sound-only.wav"
    extract_audio(five_views[0], path)
    with pytest.raises(MediaError) as exc:
        video_timeline(path)
    assert_problem(exc, E.NO_VIDEO, path)
    assert "audio (pcm_s16le)" in str(exc.value)


def test_file_without_audio_cannot_give_audio(clip_mp4, tmp_path):
    with pytest.raises(MediaError) as exc:
        extract_audio(clip_mp4, tmp_path / "a.wav")
    assert_problem(exc, E.NO_AUDIO, clip_mp4)


@pytest.mark.parametrize("content", [b"this is a text file, not a video\n" * 20, bytes(range(256)) * 8])
def test_unknown_container_is_reported(tmp_path, content):
    path = tmp_path / "mystery.mp4"
    path.write_bytes(content)
    with pytest.raises(MediaError) as exc:
        probe(path)
    assert_problem(exc, E.UNKNOWN_CONTAINER, path)


def test_window_beyond_the_end_is_reported(five_views, tmp_path):
    with pytest.raises(MediaError) as exc:
        cut_views(five_views, 2.0, 2.5, [tmp_path / f"v{i}.mp4" for i in range(5)])
    assert_problem(exc, E.WINDOW_BEYOND_END, five_views[0])
    assert "ends after the video (2.400 s)" in str(exc.value)


def test_empty_window_is_reported(five_views, tmp_path):
    with pytest.raises(MediaError) as exc:
        cut_views(five_views[:1], 1.0, 1.0, [tmp_path / "v.mp4"])
    assert exc.value.problem == E.BAD_WINDOW


def test_views_of_different_lengths_are_reported(five_views, media_dir, tmp_path):
    short = generate_indexed_video(media_dir / "short-view.mp4", frames=50, fps=25, background="red")
    views = [*five_views[:4], short]
    with pytest.raises(MediaError) as exc:
        cut_views(views, 0.0, 1.0, [tmp_path / f"v{i}.mp4" for i in range(5)])
    assert_problem(exc, E.VIEW_LENGTH_MISMATCH, short)
    assert "2.000 s" in str(exc.value) and "2.400 s" in str(exc.value)


def test_views_one_frame_apart_are_accepted(five_views, media_dir, tmp_path):
    one_short = generate_indexed_video(media_dir / "one-short.mp4", frames=59, fps=25, background="red")
    result = cut_views([five_views[0], one_short], 0.0, 1.0, [tmp_path / "a.mp4", tmp_path / "b.mp4"])
    assert [v["frames"] for v in result.views] == [25, 25]


def test_cut_counts_window_times_from_the_video_start_not_the_container_start(preroll_mkv, tmp_path):
    assert probe(preroll_mkv).seek_offset > 0
    cut_views([preroll_mkv], 0.5, 1.7, [tmp_path / "cut.mp4"])
    assert video_indices(tmp_path / "cut.mp4") == list(range(5, 17))


def test_cut_clips_get_a_keyframe_every_keyframe_interval(five_view_cut):
    out, _ = five_view_cut
    assert video_timeline(out / "v0.mp4").keyframes == (0,)  # a 1.2 s clip: only its first frame
    long_cut = cut_views([out / "v0.mp4"], 0, 1.2, [out / "again.mp4"], encode=EncodeSettings(keyframe_interval_s=0.4))
    assert long_cut.views[0]["frames"] == 30
    assert video_timeline(out / "again.mp4").keyframes == (0, 10, 20)


def test_cut_at_ntsc_rate_keeps_exactly_the_frames_of_the_window(media_dir, tmp_path):
    path = generate_indexed_video(media_dir / "ntsc.mp4", frames=60, fps="30000/1001", gop=15)
    # frame k is at k * 1001/30000 s: [1/3, 4/3) holds frames 10 (0.3337 s) .. 39 (1.3013 s)
    cut_views([path], Fraction(1, 3), Fraction(4, 3), [tmp_path / "cut.mp4"])
    assert video_indices(tmp_path / "cut.mp4") == list(range(10, 40))


def test_encode_rgb_frames_round_trips_frame_indices(tmp_path):
    from PIL import Image, ImageDraw

    from socialbench.media.encode import encode_rgb_frames
    from socialbench.media.synth import draw_index

    w, h = 64, 48
    frames = []
    for i in range(12):
        img = Image.new("RGB", (w, h), (90, 90, 90))
        draw_index(ImageDraw.Draw(img), w, h, i)
        frames.append(img.tobytes())
    out = encode_rgb_frames(b"".join(frames), tmp_path / "c.mp4", size=(w, h), fps=6)
    decoded = decode_all_frames(out)
    assert len(decoded) == 12
    assert [read_index(f) for f in decoded] == list(range(12))


def test_an_encoder_that_fails_is_named_with_the_output_and_ffmpegs_reason(tmp_path):
    from socialbench.media.encode import EncodeSettings, encode_rgb_frames

    with pytest.raises(MediaError) as exc:
        encode_rgb_frames(
            bytes(16 * 16 * 3), tmp_path / "c.mp4", size=(16, 16), fps=6, encode=EncodeSettings(codec="no_such_codec")
        )
    assert_problem(exc, E.FFMPEG_FAILED, tmp_path / "c.mp4")
    assert "no_such_codec" in str(exc.value)


# -- still images, folders, views that cannot be cut together ------------------------------------


@pytest.mark.parametrize("suffix", ["png", "jpg", "webp"])
def test_a_still_image_is_no_video_stream_not_a_one_frame_video(tmp_path, suffix):
    path = tmp_path / f"picture.{suffix}"
    Image.new("RGB", (64, 48), (200, 30, 30)).save(path)
    info = probe(path)  # probing still describes it
    assert info.still_image and info.frame_count is None
    with pytest.raises(MediaError) as exc:
        video_timeline(path)
    assert_problem(exc, E.NO_VIDEO, path)
    assert "still image" in str(exc.value) and "not a video container" in str(exc.value)


def test_a_stream_of_pictures_is_a_video_not_a_still_image(clip_mp4, tmp_path):
    # ffmpeg -f image2pipe: concatenated PNGs, read by ffprobe's png_pipe demuxer like a single PNG
    pictures = tmp_path / "clip.pngs"
    subprocess.run(
        [
            executable("ffmpeg"),
            "-v",
            "error",
            "-i",
            str(clip_mp4),
            "-frames:v",
            "20",
            "-f",
            "image2pipe",
            "-c:v",
            "png",
            str(pictures),
        ],
        check=True,
    )
    info = probe(pictures)
    assert info.format_name == "png_pipe" and not info.still_image
    assert (info.frame_count, info.frame_count_source) == (20, "packets")
    tl = video_timeline(pictures)
    assert tl.frame_count == 20 and tl.keyframes == ()  # no index to seek in: decoded from the start
    assert [image_index(f.file) for f in extract_frames(tl, [0, 7, 19], tmp_path / "frames")] == [0, 7, 19]


def test_cover_art_before_the_video_does_not_stand_in_for_it(clip_mp4, tmp_path, monkeypatch):
    cover, out = tmp_path / "cover.png", tmp_path / "covered.mkv"
    Image.new("RGB", (32, 32), (0, 90, 200)).save(cover)
    subprocess.run(
        [
            executable("ffmpeg"),
            "-v",
            "error",
            "-i",
            str(cover),
            "-i",
            str(clip_mp4),
            "-map",
            "0",
            "-map",
            "1:v",
            "-c:v:0",
            "png",
            "-c:v:1",
            "copy",
            str(out),
        ],
        check=True,
    )
    real = probe_module._ffprobe_json

    def cover_first(path, **kwargs):  # ffmpeg's muxers put cover art last; a file may have it first
        data, err = real(path, **kwargs)
        for stream in data.get("streams", []):
            if stream.get("index") == 0:
                stream["disposition"] = {**stream.get("disposition", {}), "attached_pic": 1}
        return data, err

    monkeypatch.setattr(probe_module, "_ffprobe_json", cover_first)
    info = probe(out)
    assert [(s.index, s.codec_name, s.attached_pic) for s in info.streams] == [(0, "png", True), (1, "h264", False)]
    assert info.video.index == 1 and info.display_size == (160, 120)
    tl = video_timeline(out)
    assert tl.frame_count == CLIP_FRAMES and tl.times[1] == Fraction(1, CLIP_FPS)
    frames = extract_frames(tl, [0, 25, 49], tmp_path / "frames")
    assert [image_index(f.file) for f in frames] == [0, 25, 49]
    assert Image.open(frames[0].file).size == (160, 120)
    assert len(decode_all_frames(out)) == CLIP_FRAMES


def test_a_sound_file_with_cover_art_has_no_video_stream(five_views, tmp_path):
    sound, cover, out = tmp_path / "s.wav", tmp_path / "cover.png", tmp_path / "song.m4a"
    extract_audio(five_views[0], sound)
    Image.new("RGB", (32, 32), (0, 90, 200)).save(cover)
    subprocess.run(
        [
            executable("ffmpeg"),
            "-v",
            "error",
            "-i",
            str(sound),
            "-i",
            str(cover),
            "-map",
            "0",
            "-map",
            "1",
            "-c:a",
            "aac",
            "-c:v",
            "png",
            "-disposition:v",
            "attached_pic",
            str(out),
        ],
        check=True,
    )
    with pytest.raises(MediaError) as exc:
        video_timeline(out)
    assert_problem(exc, E.NO_VIDEO, out)
    assert "cover art" in str(exc.value) and "audio (aac)" in str(exc.value)


def test_a_folder_is_reported_as_a_folder_not_as_a_missing_file(tmp_path):
    with pytest.raises(MediaError) as exc:
        probe(tmp_path)
    assert_problem(exc, E.MISSING, tmp_path)
    assert "folder" in str(exc.value) and "no such file" not in str(exc.value)


def test_the_same_video_twice_as_views_is_refused_before_cutting(five_views, tmp_path):
    views = [five_views[1], five_views[1].parent / ".." / five_views[1].parent.name / five_views[1].name]
    with pytest.raises(SocialbenchError, match=r"the same video is given twice as a view \(positions 0 and 1\)"):
        cut_views(views, 0.0, 1.0, [tmp_path / "a.mp4", tmp_path / "b.mp4"])
    assert list(tmp_path.iterdir()) == []


def test_two_clips_written_to_one_file_are_refused(five_views, tmp_path):
    with pytest.raises(SocialbenchError, match="would both be written to this file"):
        cut_views(five_views[1:3], 0.0, 1.0, [tmp_path / "same.mp4", tmp_path / "same.mp4"])
    mosaic = Mosaic(output=tmp_path / "v.mp4", views=(0, 1, 2, 3))
    with pytest.raises(SocialbenchError, match="the mosaic would both be written"):
        cut_views(five_views[1:], 0.0, 1.0, [tmp_path / f"{n}.mp4" for n in "uvwx"], mosaic=mosaic)
    assert list(tmp_path.iterdir()) == []


def test_a_clip_that_would_overwrite_a_view_is_refused(five_views):
    with pytest.raises(SocialbenchError, match="would overwrite the view"):
        cut_views(five_views[1:3], 0.0, 1.0, [five_views[2], five_views[1].with_name("other.mp4")])


@pytest.mark.parametrize(
    "positions, message",
    [
        ((1, 2, 3, 4), "position 4 is out of range"),
        ((-1, 0, 1, 2), "position -1 is out of range"),
        ((0, 0, 1, 2), "four different views"),
        ((0, 1, 2), "needs four view positions"),
        ((0, 1, 2, "3"), "must be integers"),
    ],
)
def test_mosaic_positions_must_be_four_different_views_in_range(five_views, tmp_path, positions, message):
    mosaic = Mosaic(output=tmp_path / "m.mp4", views=positions)  # type: ignore[arg-type]
    with pytest.raises(SocialbenchError, match=message):
        cut_views(five_views[1:], 0.0, 1.0, None, mosaic=mosaic)


# -- AVI: no presentation times, B-frames ----------------------------------------------------------


def test_an_avi_timeline_comes_from_decoding_times_and_knows_the_decoder_delay(bframes_avis):
    tl = video_timeline(bframes_avis[0])
    assert tl.dts_only and tl.reorder_delay == 2  # x264's default preset: the decoder holds 2 frames back
    assert tl.times == tuple(Fraction(k, AVI_FPS) for k in range(AVI_FRAMES))
    assert {0, 100, 200, 300} <= set(tl.keyframes)
    assert tl.decoder_time(10) == Fraction(12, AVI_FPS)  # ffmpeg stamps frame 10 with packet 12's time


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


@pytest.mark.parametrize(
    ("start", "end", "first", "last"),
    [
        (10, 15, 250, 374),  # the window the known issue named: it started 2 frames early
        (0, 1, 0, 24),  # from the first frame
        (Fraction(401, 100), Fraction(9, 2), 101, 112),  # just after a keyframe, between two frames
        (Fraction(1199, 100), 16, 300, 399),  # from a keyframe to the end
    ],
)
def test_cut_of_an_avi_with_b_frames_keeps_exactly_the_frames_of_the_window(
    bframes_avis, tmp_path, start, end, first, last
):
    result = cut_views(bframes_avis[:1], start, end, [tmp_path / "v0.mp4"])
    assert video_indices(tmp_path / "v0.mp4") == list(range(first, last + 1))
    assert result.views[0]["frames"] == last - first + 1


def test_cut_of_avi_views_with_b_frames_and_their_mosaic_are_in_sync(bframes_avis, tmp_path):
    outputs = [tmp_path / f"v{i}.mp4" for i in range(5)]
    cut_views(bframes_avis, 10, 15, outputs, mosaic=Mosaic(tmp_path / "mosaic.mp4", views=(1, 2, 3, 4)))
    for out in outputs:
        assert video_indices(out) == list(range(250, 375))
    for k, frame in enumerate(decode_all_frames(tmp_path / "mosaic.mp4")):
        for r, c in ((0, 0), (0, 1), (1, 0), (1, 1)):
            assert read_index(frame[r * 120 : (r + 1) * 120, c * 160 : (c + 1) * 160]) == 250 + k


def test_a_cut_clip_of_an_avi_starts_at_time_zero_with_the_frame_interval(bframes_avis, tmp_path):
    cut_views(bframes_avis[:1], 10, 15, [tmp_path / "v0.mp4"])
    times = video_timeline(tmp_path / "v0.mp4").times
    assert times[:3] == (0, Fraction(1, AVI_FPS), Fraction(2, AVI_FPS)) and len(times) == 125


def test_an_avi_cut_whose_seek_lands_on_another_keyframe_is_decoded_from_the_start(
    bframes_avis, tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr(frames_module, "DTS_SEEK_BACKOFF", Fraction(0))
    cut_views(bframes_avis[:1], 10, 15, [tmp_path / "v0.mp4"])
    assert video_indices(tmp_path / "v0.mp4") == list(range(250, 375))
    assert "decoding did not start at frame 250" in caplog.text


def test_cut_of_an_avi_without_b_frames_between_two_frames_keeps_exactly_the_frames_of_the_window(
    ultrafast_avi, tmp_path
):
    assert video_timeline(ultrafast_avi).reorder_delay == 0
    cut_views([ultrafast_avi], Fraction(1005, 100), Fraction(1505, 100), [tmp_path / "v.mp4"])
    assert video_indices(tmp_path / "v.mp4") == list(range(101, 151))
