import hashlib
from collections import Counter
from pathlib import Path

import pytest

from socialbench.core.errors import ConfigError
from socialbench.moca.dataset.demo import (
    DemoConfig,
    encode_video,
    generate,
    make_record,
    scenario_plan,
    video_frames,
)
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


PAPER_COUNTS = (("affection", 936), ("intent", 1179), ("stance", 993))


def test_scenario_counts_give_each_scenario_its_count(taxonomy):
    cfg = DemoConfig(seed=1, n_test=3108, scenario_counts=PAPER_COUNTS)
    plan = scenario_plan(cfg.scenario_counts)
    recs = [make_record("test", i, cfg, taxonomy, plan) for i in range(cfg.n_test)]
    assert Counter(r["scenario"] for r in recs) == dict(PAPER_COUNTS)


def test_scenario_plan_keeps_the_proportions_in_every_prefix():
    plan = scenario_plan(PAPER_COUNTS)
    head = Counter(plan[:311])
    assert {s: round(n * 311 / 3108) for s, n in PAPER_COUNTS} == pytest.approx(head, abs=1)


def test_n_video_gives_exactly_that_many_video_text_instances(taxonomy):
    cfg = DemoConfig(seed=1, n_test=311, n_video=88)
    recs = [make_record("test", i, cfg, taxonomy) for i in range(cfg.n_test)]
    assert sum(r["modality"] == "video_text" for r in recs) == 88
    assert all(bool(r["transcript"]) == (r["modality"] == "video_text") for r in recs)


def test_n_video_leaves_the_dev_split_and_the_other_fields_as_without_it(taxonomy):
    plain, exact = DemoConfig(seed=1, n_test=30), DemoConfig(seed=1, n_test=30, n_video=10)
    assert [make_record("dev", i, plain, taxonomy) for i in range(6)] == [
        make_record("dev", i, exact, taxonomy) for i in range(6)
    ]
    keep = ("id", "scenario", "label", "mechanism", "subject", "target", "text", "domain", "culture")
    for i in range(30):
        a, b = make_record("test", i, plain, taxonomy), make_record("test", i, exact, taxonomy)
        assert {k: a[k] for k in keep} == {k: b[k] for k in keep}


def test_scenario_counts_that_do_not_sum_to_n_test_are_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"moca\.demo\.scenario_counts: they sum to 3108, but n_test is 72"):
        DemoConfig(seed=1, n_test=72, scenario_counts=PAPER_COUNTS)


def test_n_video_over_n_test_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"moca\.demo\.n_video: 80 is more than n_test \(72\)"):
        DemoConfig(seed=1, n_test=72, n_video=80)


def test_the_knobs_come_from_params():
    params = {
        "seed": 3,
        "moca": {
            "demo": {
                "n_test": 3108,
                "n_dev": 310,
                "video_fraction": 0.33,
                "image_size": 64,
                "video_seconds": 1.0,
                "video_fps": 5,
                "video_size": [32, 32],
                "faults": False,
                "scenario_counts": dict(PAPER_COUNTS),
                "n_video": 878,
            }
        },
    }
    cfg = DemoConfig.from_params(params)
    assert (cfg.scenario_counts, cfg.n_video) == (PAPER_COUNTS, 878)
