import hashlib
from collections import Counter
from pathlib import Path

import pytest

from socialbench.moca.dataset.demo import DemoConfig, encode_video, generate, make_record, video_frames
from socialbench.moca.schema.instances import load_instances


def tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.mark.slow
def test_same_seed_gives_byte_identical_files(tmp_path, taxonomy, monkeypatch):
    cfg = DemoConfig(seed=5, n_test=9, n_dev=3, video_fraction=0.5)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        generate(Path("demo"), cfg, taxonomy)
    assert tree_hash(tmp_path / "a") == tree_hash(tmp_path / "b")


@pytest.mark.slow
def test_demo_benchmark_covers_scenarios_modalities_and_is_valid(tmp_path, taxonomy, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recs = generate(
        Path("demo"), DemoConfig(seed=3, n_test=60, n_dev=6, video_fraction=0.2, video_seconds=1.0), taxonomy
    )
    test = load_instances(tmp_path / "demo" / "test.jsonl", taxonomy)
    assert len(test) == 60 and len(recs["dev"]) == 6
    assert Counter(r["scenario"] for r in test) == {"affection": 20, "intent": 20, "stance": 20}
    assert {r["modality"] for r in test} == {"image_text", "video_text"}
    assert all(len(r["subject_options"]) == 4 == len(r["target_options"]) for r in test)
    assert all((tmp_path / r["media"][0]).is_file() for r in test)
    assert all(r["transcript"] for r in test if r["modality"] == "video_text")


def test_different_seed_gives_different_gold(taxonomy):
    a = [make_record("test", i, DemoConfig(seed=1), taxonomy) for i in range(12)]
    b = [make_record("test", i, DemoConfig(seed=2), taxonomy) for i in range(12)]
    assert a != b


@pytest.mark.slow
def test_every_demo_clip_frame_carries_its_own_index(tmp_path, taxonomy):
    from socialbench.media.synth import read_index
    from tests.helpers.media_synth import decode_all_frames

    cfg = DemoConfig(seed=1, video_seconds=2.0, video_fps=10)
    rec = make_record("test", 0, cfg, taxonomy)
    encode_video(video_frames(rec, cfg), tmp_path / "clip.mp4", cfg)
    assert [read_index(f) for f in decode_all_frames(tmp_path / "clip.mp4")] == list(range(20))


@pytest.mark.slow
def test_fault_injection_adds_one_bad_record_and_one_truncated_clip(tmp_path, taxonomy, monkeypatch):
    from socialbench.core.io import read_jsonl
    from socialbench.moca.dataset.prepare import prepare_instances

    monkeypatch.chdir(tmp_path)
    generate(Path("demo"), DemoConfig(seed=3, n_test=3, n_dev=3, video_fraction=0.0, faults=True), taxonomy)
    raw = read_jsonl(tmp_path / "demo" / "test.jsonl")
    kept, dropped = prepare_instances(raw, taxonomy, "test.jsonl")
    assert [d["id"] for d in dropped] == ["demo-test-fault-label"]
    assert dropped[0]["problems"][0]["field"] == "label"
    clip = next(r for r in kept if r["id"] == "demo-test-fault-media")
    from socialbench.media.errors import MediaError
    from socialbench.media.probe import video_timeline

    with pytest.raises(MediaError, match="truncated|announces"):
        video_timeline(tmp_path / clip["media"][0])
