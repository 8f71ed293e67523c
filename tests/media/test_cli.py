"""`socialbench media ...` (src/socialbench/media/cli.py): probe, frames, cut (clips and mosaic), audio.
`socialbench moca frames` is tested in tests/moca/test_cli.py."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from socialbench.core.errors import ConfigError, SocialbenchError
from socialbench.media.cli import media_app
from socialbench.media.errors import MediaError
from tests.helpers.moca_frames import make_workdir

runner = CliRunner()


@pytest.fixture
def workdir(tmp_path, clip_mp4, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return make_workdir(tmp_path, clip_mp4)


def test_probe_prints_json(clip_mp4):
    result = runner.invoke(media_app, ["probe", str(clip_mp4)])
    assert result.exit_code == 0 and json.loads(result.output)["frame_count"] == 50


@pytest.mark.parametrize(
    "options, message",
    [
        (["--count", "0"], "--count must be >= 1, got 0"),
        (["--count", "-3"], "--count must be >= 1, got -3"),
        (["--fps", "abc"], "--fps must be a number of frames per second"),
        (["--fps", "1/0"], "--fps must be a number of frames per second"),
        (["--fps", "-1"], "--fps must be > 0, got -1"),
        (["--fps", "0"], "--fps must be > 0, got 0"),
        (["--count", "2", "--max-side", "0"], "--max-side must be >= 2"),
        (["--count", "2", "--max-side", "-5"], "--max-side must be >= 2"),
    ],
)
def test_frames_rejects_bad_options_naming_the_option(workdir, options, message):
    result = runner.invoke(media_app, ["frames", "media/good.mp4", *options])
    assert result.exit_code != 0 and isinstance(result.exception, SocialbenchError)
    assert str(result.exception) == message or str(result.exception).startswith(message)
    assert not (workdir / "data" / "interim" / "frames").exists()


@pytest.fixture
def four_views(workdir, five_views):
    for i, v in enumerate(five_views[1:]):
        shutil.copyfile(v, workdir / "media" / f"close{i}.mp4")
    return [f"media/close{i}.mp4" for i in range(4)]


@pytest.mark.parametrize(
    "mosaic, message",
    [
        ("a,b,c,d", "--mosaic: view positions are whole numbers counting from 0"),
        (
            "1,2,3,4",
            "--mosaic: position 4 is out of range: positions count from 0, so with 4 view(s) they run from 0 to 3",
        ),
        ("-1,0,1,2", "--mosaic: position -1 is out of range"),
        ("0,0,1,2", "--mosaic: the four positions must name four different views"),
        ("0,1,2", "--mosaic needs four comma-separated view positions"),
    ],
)
def test_cut_rejects_bad_mosaic_positions_naming_the_option(workdir, four_views, mosaic, message):
    result = runner.invoke(
        media_app, ["cut", *four_views, "--start", "0", "--end", "1", "--out-dir", "out", "--mosaic", mosaic]
    )
    assert result.exit_code != 0 and isinstance(result.exception, SocialbenchError)
    assert str(result.exception).startswith(message)
    assert not (workdir / "out").exists()


def test_cut_mosaic_range_and_repeats_are_checked_by_the_one_check_of_clips(workdir, four_views, monkeypatch):
    from socialbench.media import clips

    seen = []
    real = clips.check_mosaic_positions
    monkeypatch.setattr(clips, "check_mosaic_positions", lambda *a: seen.append(a) or real(*a))
    result = runner.invoke(
        media_app, ["cut", *four_views, "--start", "0", "--end", "1", "--out-dir", "out", "--mosaic", " 3, 1,3 ,0"]
    )
    assert isinstance(result.exception, ConfigError) and seen[0] == ([3, 1, 3, 0], 4, "--mosaic")
    assert (
        str(result.exception)
        == "--mosaic: the four positions must name four different views, got [3, 1, 3, 0] (position 3 twice)"
    )


def test_cut_help_says_mosaic_positions_count_from_0():
    result = runner.invoke(media_app, ["cut", "--help"], terminal_width=200)
    assert "0-based" in result.output and "0,1,2,3" in result.output


def test_cut_mosaic_with_four_close_ups_at_positions_0_to_3(workdir, four_views):
    result = runner.invoke(
        media_app, ["cut", *four_views, "--start", "0", "--end", "0.4", "--out-dir", "out", "--mosaic", "0,1,2,3"]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (workdir / "out").iterdir()) == [
        "clip.json",
        *[f"close{i}.mp4" for i in range(4)],
        "mosaic.mp4",
    ]


@pytest.mark.parametrize("mosaic", [[], ["--mosaic", "0,1,2,3"]], ids=["clips", "clips-and-mosaic"])
def test_cut_refuses_the_same_view_twice_instead_of_overwriting_its_clip(workdir, four_views, mosaic):
    views = [four_views[0], f"./{four_views[0]}", *four_views[2:]]
    result = runner.invoke(media_app, ["cut", *views, "--start", "0", "--end", "1", "--out-dir", "out", *mosaic])
    assert result.exit_code != 0 and isinstance(result.exception, SocialbenchError)
    assert "the same video is given twice as a view (positions 0 and 1)" in str(result.exception)
    assert not (workdir / "out").exists()


def test_cut_refuses_views_whose_clips_would_have_the_same_name(workdir, four_views):
    (workdir / "other").mkdir()
    shutil.copyfile(workdir / four_views[1], workdir / "other" / "close0.mp4")
    result = runner.invoke(
        media_app, ["cut", four_views[0], "other/close0.mp4", "--start", "0", "--end", "1", "--out-dir", "out"]
    )
    assert result.exit_code != 0 and "out/close0.mp4" in str(result.exception)
    assert "would both be written to this file" in str(result.exception)
    assert not (workdir / "out").exists()


def test_probe_of_a_folder_says_it_is_a_folder(workdir):
    result = runner.invoke(media_app, ["probe", "media"])
    assert result.exit_code != 0 and isinstance(result.exception, MediaError)
    assert str(result.exception) == "media: missing_file: it is a folder, not a media file"


# ---- issue 12: a short source is no clip; media outside the data folders is refused ------------------
def half_of(src: Path, dst: Path) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: len(data) // 2])  # the header still announces every frame
    return dst


def test_cut_of_a_source_shorter_than_the_window_fails_and_leaves_no_clip(workdir, clip_mp4):
    half_of(clip_mp4, workdir / "media" / "half.mp4")
    result = runner.invoke(media_app, ["cut", "media/half.mp4", "--start", "0", "--end", "5", "--out-dir", "out"])
    assert result.exit_code != 0 and isinstance(result.exception, MediaError)
    assert result.exception.problem == "truncated" and result.exception.path == "media/half.mp4"
    assert "the clip of [0.000, 5.000) s would hold 25 of its 50 frames" in str(result.exception)
    assert not (workdir / "out").exists()


def test_cut_of_a_window_past_the_truncated_end_fails_naming_the_source(workdir, clip_mp4):
    half_of(clip_mp4, workdir / "media" / "half.mp4")
    result = runner.invoke(media_app, ["cut", "media/half.mp4", "--start", "3", "--end", "5", "--out-dir", "out"])
    assert isinstance(result.exception, MediaError) and result.exception.path == "media/half.mp4"
    assert "would hold 0 of its 20 frames" in str(result.exception) and not (workdir / "out").exists()


def test_cut_of_a_window_inside_a_whole_source_still_works(workdir):
    result = runner.invoke(media_app, ["cut", "media/good.mp4", "--start", "1.05", "--end", "2.33", "--out-dir", "out"])
    assert result.exit_code == 0, result.output
    assert json.loads((workdir / "out" / "clip.json").read_text())["views"][0]["frames"] == 13


def test_cut_into_a_folder_under_a_file_names_the_file(workdir):
    result = runner.invoke(
        media_app, ["cut", "media/good.mp4", "--start", "0", "--end", "1", "--out-dir", "media/good.mp4/out"]
    )
    assert isinstance(result.exception, ConfigError)
    assert str(result.exception).endswith("media/good.mp4 is a file, not a folder (--out-dir)")


def test_audio_output_equal_to_its_source_is_refused_before_reading(workdir):
    before = (workdir / "media" / "good.mp4").read_bytes()
    result = runner.invoke(media_app, ["audio", "media/good.mp4", "media/../media/good.mp4"])
    assert isinstance(result.exception, ConfigError) and "OUTPUT is the same file as SOURCE" in str(result.exception)
    assert (workdir / "media" / "good.mp4").read_bytes() == before
