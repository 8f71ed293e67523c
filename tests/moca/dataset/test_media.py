import shutil

import pytest

from socialbench.media import errors as E
from socialbench.media.cache import FrameCache
from socialbench.media.errors import MediaError
from socialbench.media.report import MediaReport
from socialbench.media.sampling import FrameSampling
from socialbench.media.settings import MediaSettings
from socialbench.moca.dataset.media import KEPT, attach_frames, moca_sampling
from tests.conftest import make_instance
from tests.helpers.media_synth import generate_indexed_video
from tests.media.conftest import CLIP_FPS, CLIP_FRAMES, image_index

SAMPLING = FrameSampling.uniform(4, max_side=64)


@pytest.fixture(scope="module")
def clip_mp4(tmp_path_factory):
    """The media tests' clip (tests/media/conftest.py): 50 frames at 10 fps, a keyframe every 12."""
    return generate_indexed_video(
        tmp_path_factory.mktemp("media") / "clip.mp4", frames=CLIP_FRAMES, fps=CLIP_FPS, gop=12
    )


@pytest.fixture
def repo(tmp_path, clip_mp4):
    (tmp_path / "media").mkdir()
    shutil.copyfile(clip_mp4, tmp_path / "media" / "good.mp4")
    (tmp_path / "media" / "empty.mp4").write_bytes(b"")
    (tmp_path / "media" / "pic.png").write_bytes(b"png bytes are not read here")
    return tmp_path


def video(iid, path):
    return make_instance(iid, modality="video_text", media=[path], transcript="A: hi")


def run(repo, records, on_error="skip"):
    report = MediaReport()
    out = attach_frames(
        records,
        split="test",
        source="interim/test.jsonl",
        cache=FrameCache(repo / "frames"),
        sampling=SAMPLING,
        report=report,
        on_error=on_error,
        root=repo,
    )
    return out, report


def test_video_instances_get_frames_in_temporal_order_with_path_hash_index_timestamp(repo):
    (rec,), _ = run(repo, [video("v1", "media/good.mp4")])
    assert [f["index"] for f in rec["frames"]] == [6, 18, 31, 43]
    assert [f["timestamp"] for f in rec["frames"]] == [0.6, 1.8, 3.1, 4.3]
    assert all(f["path"].startswith("frames/") for f in rec["frames"])
    assert [image_index(repo / f["path"]) for f in rec["frames"]] == [6, 18, 31, 43]


def test_image_instances_pass_through_unchanged(repo):
    image = make_instance("i1", media=["media/pic.png"])
    (rec,), _ = run(repo, [image])
    assert rec == image and "frames" not in rec


def test_input_records_are_not_modified(repo):
    original = video("v1", "media/good.mp4")
    run(repo, [original])
    assert "frames" not in original


def test_bad_media_with_skip_keeps_the_instance_marked_media_error_and_reports_why(repo):
    recs = [video("v1", "media/good.mp4"), video("v2", "media/empty.mp4"), make_instance("i1", media=["media/pic.png"])]
    out, report = run(repo, recs)
    assert [r["id"] for r in out] == ["v1", "v2", "i1"]  # N never shrinks at evaluation time
    (problem,) = report.problems
    assert (problem.id, problem.problem, problem.action) == ("v2", E.EMPTY, KEPT)
    assert "empty.mp4" in problem.path and "v2" in problem.message
    marked = out[1]
    assert "frames" not in marked and "empty.mp4" in marked["media_error"] and E.EMPTY in marked["media_error"]
    counts = report.counts["test"]
    assert (counts.instances, counts.video_instances, counts.with_frames, counts.frames, counts.left_out) == (
        3,
        2,
        1,
        4,
        0,
    )


def test_a_marked_instance_loads_and_is_answered_without_a_call(repo, taxonomy, tmp_path):
    from socialbench.core.backend import ModelSpec
    from socialbench.core.benchmarks import Final, get_benchmark
    from socialbench.core.io import write_jsonl
    from socialbench.moca.schema.instances import load_instances

    out, _ = run(repo, [video("v2", "media/empty.mp4")])
    write_jsonl(tmp_path / "processed.jsonl", out)
    (inst,) = load_instances(tmp_path / "processed.jsonl", taxonomy)
    answer = get_benchmark("moca").method("direct", ModelSpec(name="m", backend="random"), 0).step(inst, [])
    assert isinstance(answer, Final) and answer.error == f"media: {inst['media_error']}"


def test_media_that_works_again_clears_an_earlier_mark(repo):
    (rec,), report = run(repo, [video("v1", "media/good.mp4") | {"media_error": "earlier: empty"}])
    assert "media_error" not in rec and len(rec["frames"]) == 4 and report.problems == []


def test_bad_media_with_fail_stops_naming_file_instance_and_problem(repo):
    with pytest.raises(MediaError) as exc:
        run(repo, [video("v2", "media/empty.mp4")], on_error="fail")
    message = str(exc.value)
    assert "empty.mp4" in message and "v2" in message and E.EMPTY in message


def test_a_video_instance_without_exactly_one_video_is_reported(repo):
    out, report = run(repo, [video("v3", "media/good.mp4") | {"media": ["media/good.mp4", "media/good.mp4"]}])
    assert [r["id"] for r in out] == ["v3"] and "exactly one video" in out[0]["media_error"]
    assert report.problems[0].problem == E.BAD_INSTANCE
    assert report.problems[0].path == "interim/test.jsonl"


def test_settings_come_from_the_media_section_of_params():
    s = MediaSettings.from_params({"media": {"on_error": "fail", "frame_max_side": None, "image_format": "jpg"}})
    assert moca_sampling(s, 6) == FrameSampling.uniform(6, max_side=None, image_format="jpg")
    assert s.meeting_sampling().fps == FrameSampling.at_fps("1/2").fps
    with pytest.raises(ValueError, match="on_error"):
        MediaSettings(on_error="ignore")


def test_a_picture_given_as_the_video_is_marked_and_reported_as_no_video_stream(repo):
    from PIL import Image

    Image.new("RGB", (64, 48), (10, 120, 30)).save(repo / "media" / "still.png")
    out, report = run(repo, [video("v1", "media/good.mp4"), video("v4", "media/still.png")])
    assert [r["id"] for r in out] == ["v1", "v4"] and "still image" in out[1]["media_error"]
    (problem,) = report.problems
    assert (problem.id, problem.problem, problem.action) == ("v4", E.NO_VIDEO, KEPT)
    assert "still.png" in problem.path and "still image" in problem.message


def test_a_cached_frame_of_a_picture_from_an_earlier_run_is_not_served(repo):
    import json

    from PIL import Image

    from socialbench.core.hashing import sha256_file, sha256_json

    still = repo / "media" / "still.png"
    Image.new("RGB", (64, 48), (10, 120, 30)).save(still)
    cache = FrameCache(repo / "frames")
    key = sha256_json(cache.key_parts(sha256_file(still), SAMPLING))
    entry = repo / "frames" / key[:2] / key  # what the earlier version wrote: one "frame" of the picture
    entry.mkdir(parents=True)
    shutil.copyfile(still, entry / "000000.png")
    manifest = {
        "key": key,
        "key_parts": {},
        "source": {"format": "png_pipe"},
        "size": [64, 48],
        "ffmpeg_version": "x",
        "frames": [{"index": 0, "timestamp": 0.0, "file": "000000.png", "sha256": sha256_file(still)}],
    }
    (entry / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    with pytest.raises(MediaError) as exc:
        cache.frames(still, SAMPLING)
    assert exc.value.problem == E.NO_VIDEO and cache.hits == 0
