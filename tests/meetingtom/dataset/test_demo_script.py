"""The demo's scripted meetings (socialbench.meetingtom.dataset.demo_script): seeded plans, NXT layers
that the real parser reads and mines, a deterministic archive."""

import io
import zipfile

from socialbench.core.config import read_params_file, validate_params
from socialbench.meetingtom.dataset.demo_script import DemoConfig, plan_meeting, release_files, zip_bytes

CFG = DemoConfig(seed=7, corpus=("ES9000a",), seconds=110, fps=4, size=(96, 72), sample_rate=8000)


def parsed(tmp_path, cfg=CFG):
    from socialbench.meetingtom.dataset.ami.nxt import parse_corpus

    scripts = [plan_meeting(m, cfg) for m in cfg.corpus]
    for rel, text in release_files(scripts).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="latin-1")
    return parse_corpus(tmp_path), scripts


def test_the_same_seed_gives_the_same_plan_and_another_seed_another():
    a, b = plan_meeting("ES9000a", CFG), plan_meeting("ES9000a", CFG)
    c = plan_meeting("ES9000a", DemoConfig(seed=8, corpus=("ES9000a",)))
    assert release_files([a]) == release_files([b])
    assert release_files([a]) != release_files([c])


def test_the_participants_sit_on_a_shuffled_camera_each():
    s = plan_meeting("ES9000a", CFG)
    cams = [p.camera for p in s.participants]
    assert sorted(cams) == ["Closeup1", "Closeup2", "Closeup3", "Closeup4"]
    assert cams != ["Closeup1", "Closeup2", "Closeup3", "Closeup4"]  # letters are not cameras, as in the corpus


def test_every_layer_parses_without_an_error(tmp_path):
    corpus, _ = parsed(tmp_path)
    (m,) = corpus.meetings
    assert {
        "words",
        "segments",
        "dialogue_acts",
        "adjacency_pairs",
        "you_usages",
        "decisions",
        "topics",
        "roles",
    } <= m.layers
    assert [p for p in corpus.problems if p.is_error] == []
    assert m.end == 110


def test_each_scene_has_one_you_event_with_the_planned_addressee(tmp_path):
    from socialbench.meetingtom.dataset.ami.you_events import you_events

    corpus, (script,) = parsed(tmp_path)
    planned = [(a.speaker, a.addressee[0]) for a in script.acts if a.yous and a.addressee and len(a.addressee) == 1]
    events = you_events(corpus.meetings)
    assert [(e.speaker, e.addressee) for e in events] == planned
    assert len(events) == 2  # 110 s: two scenes


def test_the_other_yous_are_rejected_each_for_its_reason(tmp_path):
    from collections import Counter

    from socialbench.meetingtom.dataset.ami.you_events import you_candidates

    corpus, _ = parsed(tmp_path)
    reasons = Counter(c.reason for c in you_candidates(corpus.meetings[0]))
    assert reasons == {None: 2, "not_singular": 4, "several_addressees": 2, "no_addressee": 2}


def test_mining_keeps_a_you_window_per_scene_and_a_consensus_window(tmp_path):
    from socialbench.meetingtom.dataset.ami.mining import mine_meeting

    corpus, _ = parsed(tmp_path)
    result = mine_meeting(corpus.meetings[0])
    you = [c for c in result.accepted if c.task == "you"]
    assert len(you) == 2 and all(round(c.end - c.start, 3) == 50 for c in you)
    assert [c.task for c in result.accepted].count("consensus") == 1
    assert any(c.task == "state" for c in result.accepted)


def test_the_archive_is_stored_uncompressed_with_fixed_times_in_name_order():
    data = zip_bytes({"b.txt": "x", "a/c.xml": "y"})
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert [i.filename for i in zf.infolist()] == ["a/c.xml", "b.txt"]
    assert {(i.compress_type, i.date_time) for i in zf.infolist()} == {(zipfile.ZIP_STORED, (1980, 1, 1, 0, 0, 0))}
    assert zip_bytes({"b.txt": "x", "a/c.xml": "y"}) == data


# ---- clips_per_task: the paper's proportions (issue 32.1) -----------------------------------------
def _mined_counts(tmp_path, cfg):
    from collections import Counter

    from socialbench.meetingtom.dataset.ami.mining import mine_meeting

    corpus, _ = parsed(tmp_path, cfg)
    return {m.id: dict(Counter(c.task for c in mine_meeting(m).accepted)) for m in corpus.meetings}


def test_clips_per_task_gives_every_meeting_that_many_windows_of_each_task_family(tmp_path):
    cfg = DemoConfig(seed=7, corpus=("ES9000a", "ES9000b"), seconds=3 * 55, clips_per_task=3)
    assert _mined_counts(tmp_path, cfg) == {m: {"state": 3, "you": 3, "consensus": 3} for m in cfg.corpus}


def test_ten_clips_per_task_are_the_papers_thirty_clips_a_meeting(tmp_path):
    cfg = DemoConfig(seed=20240611, corpus=("ES9000a",), seconds=550, clips_per_task=10)
    assert _mined_counts(tmp_path, cfg) == {"ES9000a": {"state": 10, "you": 10, "consensus": 10}}


def test_the_demos_scenes_stay_when_clips_per_task_is_null(tmp_path):
    assert _mined_counts(tmp_path, CFG) == {"ES9000a": {"state": 9, "you": 2, "consensus": 1}}


def test_the_demo_releases_annotation_archive_keeps_its_bytes():
    # params.yaml's demo (seed 20240611, ES9000a-c of 110 s): the archive the pipeline has always read,
    # measured before clips_per_task existed; a change here changes every MeetingToM demo output
    from socialbench.core.hashing import sha256_bytes

    cfg = DemoConfig(seed=20240611, corpus=("ES9000a", "ES9000b", "ES9000c"), seconds=110)
    archive = zip_bytes(release_files([plan_meeting(m, cfg) for m in cfg.corpus]))
    assert sha256_bytes(archive) == "530fed986f51be81e8539712585b548bc47f933cbb7b45941de5fd33ac9cb9de"


def test_clips_per_task_meetings_are_deterministic_and_differ_from_the_demos():
    cfg = DemoConfig(seed=7, corpus=("ES9000a",), seconds=110, clips_per_task=2)
    a = release_files([plan_meeting("ES9000a", cfg)])
    assert a == release_files([plan_meeting("ES9000a", cfg)])
    assert a != release_files([plan_meeting("ES9000a", CFG)])


def test_a_length_that_does_not_fit_clips_per_task_is_refused_naming_both_keys():
    import pytest

    from socialbench.core.errors import ConfigError

    params = {
        "seed": 1,
        "meetingtom": {
            "demo": {
                "corpus": ["ES9000a"],
                "seconds": 275,
                "fps": 4,
                "size": [96, 72],
                "sample_rate": 8000,
                "clips_per_task": 10,
            }
        },
    }
    with pytest.raises(
        ConfigError, match=r"meetingtom\.demo\.seconds: 275 does not fit demo\.clips_per_task 10 .* 550"
    ):
        DemoConfig.from_params(params)


def test_clips_per_task_is_read_from_params_and_absent_means_the_demos_scenes():
    d = {"corpus": ["ES9000a"], "seconds": 110, "fps": 4, "size": [96, 72], "sample_rate": 8000}
    assert DemoConfig.from_params({"seed": 1, "meetingtom": {"demo": d}}).clips_per_task is None
    cfg = DemoConfig.from_params({"seed": 1, "meetingtom": {"demo": {**d, "clips_per_task": 2}}})
    assert cfg.clips_per_task == 2


def test_the_demo_meetings_are_drawn_at_2_fps_by_params_the_schema_default_and_the_config(repo_root):
    # docs/decisions/demo-data.md: the demo's models read no pixels, so the frame rate only costs
    raw = read_params_file(repo_root / "params.yaml")
    assert DemoConfig.from_params(validate_params(raw)).fps == 2
    del raw["meetingtom"]["demo"]["fps"]
    assert DemoConfig.from_params(validate_params(raw)).fps == DemoConfig(seed=0).fps == 2
