"""The demo's scripted meetings (socialbench.meetingtom.dataset.demo_script): seeded plans, NXT layers
that the real parser reads and mines, a deterministic archive."""

import io
import zipfile

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
