import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.media.cli import media_app
from socialbench.media.errors import MediaError
from socialbench.moca.cli import app as moca_app
from tests.conftest import make_instance

runner = CliRunner()


@pytest.fixture
def workdir(tmp_path, clip_mp4, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "media").mkdir()
    shutil.copyfile(clip_mp4, tmp_path / "media" / "good.mp4")
    (tmp_path / "media" / "empty.mp4").write_bytes(b"")
    # the fixture's media live in media/, not data/: allowed in params (media.allowed_roots)
    (tmp_path / "params.yaml").write_text(
        "moca:\n  frames: 4\nmedia:\n  frame_max_side: 64\n  allowed_roots: [media]\n", "utf-8"
    )
    interim = tmp_path / "data" / "interim" / "moca"
    interim.mkdir(parents=True)
    test = [
        make_instance("i1", media=["media/pic.png"]),
        make_instance("v1", modality="video_text", media=["media/good.mp4"], transcript="A: hi"),
        make_instance("v2", modality="video_text", media=["media/empty.mp4"], transcript="A: hi"),
    ]
    (interim / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in test), "utf-8")
    (interim / "dev.jsonl").write_text(json.dumps(make_instance("d1", media=["media/pic.png"])) + "\n", "utf-8")
    return tmp_path


ARGS = [
    "frames",
    "--input",
    "data/interim/moca/test.jsonl",
    "--output",
    "data/processed/moca/test.jsonl",
    "--input",
    "data/interim/moca/dev.jsonl",
    "--output",
    "data/processed/moca/dev.jsonl",
]


def read(path):
    return [json.loads(line) for line in open(path, encoding="utf-8")]


def test_moca_frames_writes_processed_splits_and_the_media_report(workdir):
    result = runner.invoke(moca_app, ARGS)
    assert result.exit_code == 0, result.output
    test = read("data/processed/moca/test.jsonl")
    # An evaluation never shrinks N: the instance whose clip failed is kept, marked, scored invalid.
    assert [r["id"] for r in test] == ["i1", "v1", "v2"]
    assert len(test[1]["frames"]) == 4 and "frames" not in test[0]
    assert "frames" not in test[2] and "zero_byte" in test[2]["media_error"]
    assert [r["id"] for r in read("data/processed/moca/dev.jsonl")] == ["d1"]
    (problem,) = read("results/reports/media.jsonl")
    assert (problem["id"], problem["problem"]) == ("v2", "zero_byte")
    assert "v2" in (workdir / "results/reports/media.md").read_text("utf-8")


def test_moca_frames_rerun_gives_identical_bytes_from_the_cache(workdir):
    runner.invoke(moca_app, ARGS)
    first = {
        p: (workdir / p).read_bytes()
        for p in ("data/processed/moca/test.jsonl", "results/reports/media.jsonl", "results/reports/media.md")
    }
    result = runner.invoke(moca_app, ARGS)
    assert "1 hit(s), 0 extracted" in result.output
    assert all((workdir / p).read_bytes() == data for p, data in first.items())


def test_moca_frames_with_fail_stops_naming_the_file_and_problem(workdir):
    result = runner.invoke(moca_app, [*ARGS, "--on-error", "fail"])
    assert result.exit_code != 0 and isinstance(result.exception, MediaError)
    assert "media/empty.mp4" in str(result.exception) and "zero_byte" in str(result.exception)
    assert not (workdir / "data/processed/moca/test.jsonl").exists()
    assert read("results/reports/media.jsonl")[0]["action"] == "failed"


def test_moca_frames_needs_one_output_per_input(workdir):
    result = runner.invoke(moca_app, ARGS[:7])
    assert result.exit_code != 0 and "one output per input" in str(result.exception)


@pytest.mark.slow
def test_socialbench_media_command_exits_non_zero_on_bad_media(workdir):
    exe = shutil.which("socialbench", path=str(Path(sys.executable).parent))
    proc = subprocess.run([exe, "moca", *ARGS, "--on-error", "fail"], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "media/empty.mp4" in proc.stderr and "zero_byte" in proc.stderr


def test_probe_prints_json(clip_mp4):
    result = runner.invoke(media_app, ["probe", str(clip_mp4)])
    assert result.exit_code == 0 and json.loads(result.output)["frame_count"] == 50


def test_prune_keeps_exactly_the_frames_the_instances_name(workdir):
    assert runner.invoke(moca_app, ARGS).exit_code == 0
    frames = workdir / "data" / "interim" / "frames"
    stale = frames / "ab" / ("ab" + "0" * 62)
    stale.mkdir(parents=True)
    (stale / "manifest.json").write_text("{}", "utf-8")
    result = runner.invoke(moca_app, [*ARGS, "--prune"])
    assert result.exit_code == 0, result.output
    assert not (frames / "ab").exists()
    named = {Path(f["path"]).parent.name for r in read("data/processed/moca/test.jsonl") for f in r.get("frames", [])}
    kept = {p.name for p in frames.glob("??/*") if p.is_dir()}
    assert kept == named and len(kept) == 1


INDEX_ARGS = [*ARGS, "--prune", "--index", "data/interim/frames/index.json"]


def named_entries():
    return sorted(
        {
            Path(f["path"]).parent.name
            for split in ("test", "dev")
            for r in read(f"data/processed/moca/{split}.jsonl")
            for f in r.get("frames", [])
        }
    )


def test_index_lists_exactly_the_entries_the_instances_name_in_the_same_bytes_on_rerun(workdir):
    assert runner.invoke(moca_app, INDEX_ARGS).exit_code == 0
    index = workdir / "data" / "interim" / "frames" / "index.json"
    first = index.read_bytes()
    stale = workdir / "data" / "interim" / "frames" / "ab" / ("ab" + "0" * 62)
    stale.mkdir(parents=True)
    (stale / "manifest.json").write_text("{}", "utf-8")
    result = runner.invoke(moca_app, INDEX_ARGS)
    assert result.exit_code == 0 and "1 hit(s), 0 extracted" in result.output
    assert index.read_bytes() == first
    assert json.loads(first) == {"entries": named_entries(), "format": 1, "frames": 4} and len(named_entries()) == 1


def test_a_deleted_frame_cache_is_rebuilt_with_its_index(workdir):
    assert runner.invoke(moca_app, INDEX_ARGS).exit_code == 0
    frames = workdir / "data" / "interim" / "frames"
    before = {
        p.relative_to(frames): p.read_bytes() for p in frames.rglob("*") if p.is_file() and ".locks" not in p.parts
    }
    shutil.rmtree(frames)
    result = runner.invoke(moca_app, INDEX_ARGS)
    assert result.exit_code == 0 and "0 hit(s), 1 extracted" in result.output
    after = {
        p.relative_to(frames): p.read_bytes() for p in frames.rglob("*") if p.is_file() and ".locks" not in p.parts
    }
    assert after == before and Path("index.json") in after
    assert all(
        (workdir / f["path"]).is_file() for r in read("data/processed/moca/test.jsonl") for f in r.get("frames", [])
    )


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


def test_moca_frames_reports_a_picture_given_as_the_video(workdir):
    from PIL import Image

    Image.new("RGB", (64, 48), (0, 0, 0)).save(workdir / "media" / "still.png")
    (workdir / "data/interim/moca/test.jsonl").write_text(
        json.dumps(make_instance("v9", modality="video_text", media=["media/still.png"], transcript="A: hi")) + "\n",
        "utf-8",
    )
    result = runner.invoke(moca_app, ARGS)
    assert result.exit_code == 0, result.output
    (kept,) = read("data/processed/moca/test.jsonl")
    assert kept["id"] == "v9" and "no_video_stream" in kept["media_error"]
    (problem,) = read("results/reports/media.jsonl")
    assert (problem["id"], problem["problem"]) == ("v9", "no_video_stream")


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


@pytest.mark.parametrize("escape", ["dotdot", "symlink", "absolute"])
def test_moca_frames_refuses_media_leading_out_of_the_allowed_folders_naming_the_instance(
    workdir, escape, tmp_path_factory
):
    import os

    outside = tmp_path_factory.mktemp("outside") / "v.mp4"
    shutil.copyfile(workdir / "media" / "good.mp4", outside)
    (workdir / "media" / "link.mp4").symlink_to(outside)  # inside an allowed folder, leading out of it
    path = {
        "dotdot": "media/../" + os.path.relpath(outside, workdir),
        "absolute": str(outside),
        "symlink": "media/link.mp4",
    }[escape]
    rec = make_instance("vx", modality="video_text", media=[path], transcript="A: hi")
    (workdir / "data" / "interim" / "moca" / "test.jsonl").write_text(json.dumps(rec) + "\n", "utf-8")
    result = runner.invoke(moca_app, ARGS)
    assert result.exit_code != 0 and isinstance(result.exception, DataError)
    err = result.exception
    assert (err.path, err.record, err.field) == ("data/interim/moca/test.jsonl", "vx", "media")
    assert "outside the repository's data folder" in str(err) and ("symlink" in str(err)) == (escape == "symlink")
    assert not (workdir / "data" / "processed").exists() and not (workdir / "results").exists()


def test_moca_frames_refuses_an_output_that_is_its_input(workdir):
    before = (workdir / "data" / "interim" / "moca" / "test.jsonl").read_bytes()
    result = runner.invoke(
        moca_app, ["frames", "--input", "data/interim/moca/test.jsonl", "--output", "data/interim/moca/test.jsonl"]
    )
    assert isinstance(result.exception, ConfigError) and "--output is the same file as --input" in str(result.exception)
    assert (workdir / "data" / "interim" / "moca" / "test.jsonl").read_bytes() == before
