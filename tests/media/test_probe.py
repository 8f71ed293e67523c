"""Probing media files (ffprobe): duration, frames, streams, rotation, each frame's time, and the bad files
it names (missing, empty, truncated, no video, unknown container, still images)."""

import subprocess
from fractions import Fraction

import pytest
from PIL import Image

from socialbench.core.tools import executable
from socialbench.media import errors as E
from socialbench.media import probe as probe_module
from socialbench.media.clips import extract_audio
from socialbench.media.errors import MediaError
from socialbench.media.frames import extract_frames
from socialbench.media.probe import probe, video_timeline
from tests.helpers.media_synth import decode_all_frames, generate_indexed_video
from tests.media.conftest import (
    AVI_FPS,
    AVI_FRAMES,
    CLIP_FPS,
    CLIP_FRAMES,
    assert_problem,
    image_index,
    truncate,
)


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


@pytest.mark.parametrize("content", [b"this is a text file, not a video\n" * 20, bytes(range(256)) * 8])
def test_unknown_container_is_reported(tmp_path, content):
    path = tmp_path / "mystery.mp4"
    path.write_bytes(content)
    with pytest.raises(MediaError) as exc:
        probe(path)
    assert_problem(exc, E.UNKNOWN_CONTAINER, path)


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


def test_an_avi_timeline_comes_from_decoding_times_and_knows_the_decoder_delay(bframes_avis):
    tl = video_timeline(bframes_avis[0])
    assert tl.dts_only and tl.reorder_delay == 2  # x264's default preset: the decoder holds 2 frames back
    assert tl.times == tuple(Fraction(k, AVI_FPS) for k in range(AVI_FRAMES))
    assert {0, 100, 200, 300} <= set(tl.keyframes)
    assert tl.decoder_time(10) == Fraction(12, AVI_FPS)  # ffmpeg stamps frame 10 with packet 12's time
