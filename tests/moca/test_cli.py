"""`socialbench moca ...` (src/socialbench/moca/cli.py): the sources, acquire, candidates, preprocess and
unimodal commands, and frames (the sampled frames of the video instances, the media report)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from socialbench.cli import app
from socialbench.core.errors import ConfigError, DataError
from socialbench.media.cache import CACHE_FORMAT
from socialbench.media.errors import MediaError
from socialbench.moca.cli import app as moca_app
from tests.conftest import make_instance
from tests.helpers.media_synth import generate_indexed_video
from tests.helpers.moca_frames import ARGS, make_workdir, read

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def invoke(*args):
    res = runner.invoke(app, ["moca", *map(str, args)])
    assert res.exit_code == 0, (res.output, res.exception)
    return res


def params_file(tmp_path, moca):
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    raw["moca"].update(moca)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_sources_lists_locations_and_the_manual_steps():
    out = invoke("sources").output
    assert "hateful_memes: Hateful Memes" in out and "Accept the dataset licence" in out
    assert "sha256 ec9533032c5f143f197cb5fa5d4b29ab9bf56a20b0dc05d5b31d052f5957d39c" in out


@pytest.mark.shared
def test_mirror_acquisition_then_filtering_of_the_shared_files(shared_dir, tmp_path):
    data = shared_dir / "data"
    sources = {
        "mustard": {"mode": "mirror", "mirror": str(data / "mustard")},
        "mmsd2": {"mode": "mirror", "mirror": str(data / "mmsd2"), "splits": ["valid"]},
    }
    params = params_file(tmp_path, {"sources": sources, "preprocess": {"missing_media": "keep"}})
    inputs = []
    for name in sources:
        invoke("acquire", "--source", name, "--root", tmp_path / "raw" / name, "--params", params)
        invoke(
            "candidates",
            "--source",
            name,
            "--root",
            tmp_path / "raw" / name,
            "--out",
            tmp_path / f"{name}.jsonl",
            "--params",
            params,
        )
        inputs += ["--input", tmp_path / f"{name}.jsonl"]
    for k in (1, 2):
        invoke(
            "preprocess",
            *inputs,
            "--out",
            tmp_path / f"pre{k}.jsonl",
            "--report",
            tmp_path / f"pre{k}.report.jsonl",
            "--counts-json",
            tmp_path / f"pre{k}.json",
            "--counts-md",
            tmp_path / f"pre{k}.md",
            "--params",
            params,
        )
    assert (tmp_path / "pre1.jsonl").read_bytes() == (tmp_path / "pre2.jsonl").read_bytes()
    assert (tmp_path / "pre1.report.jsonl").read_bytes() == (tmp_path / "pre2.report.jsonl").read_bytes()
    counts = json.loads((tmp_path / "pre1.json").read_text())
    assert counts["total"]["pool"] == 690 + 2410
    kept = sum(1 for _ in (tmp_path / "pre1.jsonl").open())
    removed = sum(1 for _ in (tmp_path / "pre1.report.jsonl").open())
    assert kept + removed == 690 + 2410 and counts["total"]["kept"] == kept
    invoke(
        "unimodal",
        "--input",
        tmp_path / "pre1.jsonl",
        "--out",
        tmp_path / "uni.jsonl",
        "--report",
        tmp_path / "uni.report.jsonl",
        "--counts-json",
        tmp_path / "uni.json",
        "--params",
        params,
    )
    from socialbench.moca.dataset.unimodal import REASONS

    uni = json.loads((tmp_path / "uni.json").read_text())["total"]
    assert uni["pool"] == kept == uni["kept"] + sum(uni[r] for r in REASONS)
    assert uni["kept"] == sum(1 for _ in (tmp_path / "uni.jsonl").open())


def test_a_truncated_source_file_stops_the_command_with_one_line_naming_file_and_record(tmp_path):
    (tmp_path / "valid.json").write_text('[{"image_id": 1, "text": "a", "label": 0},\n {"image_id": 2, "te')
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "socialbench",
            "moca",
            "candidates",
            "--source",
            "mmsd2",
            "--root",
            str(tmp_path),
            "--split",
            "valid",
            "--out",
            str(tmp_path.parent / f"{tmp_path.name}-c.jsonl"),  # outside the source's folder, which is read
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: {tmp_path / 'valid.json'}, record 2, after record 1: invalid JSON"
    )
    assert not (tmp_path.parent / f"{tmp_path.name}-c.jsonl").exists()


def test_preprocess_refuses_a_candidate_file_that_breaks_the_schema(tmp_path):
    from socialbench.core.errors import DataError
    from socialbench.moca.dataset.sources.base import candidate

    rec = candidate("mmsd2", "1", split="valid", modality="image_text", text="t", origin_file="f", origin_record="1")
    del rec["text"]
    (tmp_path / "c.jsonl").write_text(json.dumps(rec) + "\n")
    res = runner.invoke(
        app,
        [
            "moca",
            "preprocess",
            "--input",
            str(tmp_path / "c.jsonl"),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--report",
            str(tmp_path / "r.jsonl"),
        ],
    )
    assert isinstance(res.exception, DataError)
    assert str(res.exception) == f"{tmp_path / 'c.jsonl'}, record mmsd2:1, field 'text': missing"


# ---- moca frames --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clip_mp4(tmp_path_factory):
    """50 frames at 10 fps, 160x120, H.264 with a keyframe every 12 frames."""
    return generate_indexed_video(tmp_path_factory.mktemp("media") / "clip.mp4", frames=50, fps=10, gop=12)


@pytest.fixture
def workdir(tmp_path, clip_mp4, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return make_workdir(tmp_path, clip_mp4)


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
def test_the_moca_frames_command_exits_non_zero_on_bad_media(workdir):
    exe = shutil.which("socialbench", path=str(Path(sys.executable).parent))
    proc = subprocess.run([exe, "moca", *ARGS, "--on-error", "fail"], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "media/empty.mp4" in proc.stderr and "zero_byte" in proc.stderr


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
    assert json.loads(first) == {"entries": named_entries(), "format": CACHE_FORMAT, "frames": 4}
    assert len(named_entries()) == 1


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


@pytest.mark.parametrize("escape", ["dotdot", "symlink", "absolute"])
def test_moca_frames_refuses_media_leading_out_of_the_allowed_folders_naming_the_instance(
    workdir, escape, tmp_path_factory
):
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
