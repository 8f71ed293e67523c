"""``socialbench meetingtom ...`` commands, invoked on the sub-app with typer's CliRunner."""

import json

import pytest
from typer.testing import CliRunner

from socialbench.errors import ConfigError, DataError
from socialbench.io import read_jsonl_lines
from socialbench.meetingtom.cli import meetingtom_app
from tests.meetingtom.tiny_ami import MEETING

runner = CliRunner()


def records(path):
    return [line.record for line in read_jsonl_lines(path)]


def test_you_events_writes_one_json_line_per_event(ami_dir, tmp_path):
    out = tmp_path / "you.jsonl"
    res = runner.invoke(meetingtom_app, ["you-events", "--ami", str(ami_dir), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert records(out) == [{"meeting": MEETING, "speaker": "A", "word_id": f"{MEETING}.A.words3",
                             "start": 10.8, "end": 11.0, "addressee": "B"}]  # fmt: skip
    assert "1 events from 1 meetings" in res.output


def test_you_events_writes_parse_problems_when_asked(ami_dir, tmp_path):
    problems = tmp_path / "problems.jsonl"
    res = runner.invoke(meetingtom_app, ["you-events", "--ami", str(ami_dir), "--out", str(tmp_path / "y.jsonl"), "--problems", str(problems)])
    assert res.exit_code == 0, res.output
    assert {r["kind"] for r in records(problems)} == {"missing_layer"}
    assert set(records(problems)[0]) == {"meeting", "file", "element", "kind", "message"}


def test_you_events_on_a_missing_folder_is_a_data_error(tmp_path):
    res = runner.invoke(meetingtom_app, ["you-events", "--ami", str(tmp_path / "nope"), "--out", str(tmp_path / "y.jsonl")])
    assert isinstance(res.exception, DataError)  # the main CLI prints it as one line, exit status 2
    assert not (tmp_path / "y.jsonl").exists()


def test_you_events_strict_stops_at_an_annotation_error(ami_dir, tmp_path):
    (ami_dir / f"dialogueActs/{MEETING}.A.dialog-act.xml").write_text("<nite:root")
    res = runner.invoke(meetingtom_app, ["you-events", "--ami", str(ami_dir), "--out", str(tmp_path / "y.jsonl"), "--strict"])
    assert isinstance(res.exception, DataError)
    assert "not well-formed" in str(res.exception) and f"{MEETING}.A.dialog-act.xml" in str(res.exception)


def test_mine_writes_kept_candidates_and_a_report_of_rejected_ones(ami_dir, tmp_path):
    out, report = tmp_path / "cand.jsonl", tmp_path / "rejected.jsonl"
    res = runner.invoke(meetingtom_app, ["mine", "--ami", str(ami_dir), "--out", str(out), "--report", str(report)])
    assert res.exit_code == 0, res.output
    kept, rejected = records(out), records(report)
    assert sorted({r["task"] for r in kept}) == ["consensus", "state", "you"]
    assert all(r["reason"] is None for r in kept) and all(r["reason"] for r in rejected)


def test_mine_one_task_only(ami_dir, tmp_path):
    out = tmp_path / "cand.jsonl"
    res = runner.invoke(meetingtom_app, ["mine", "--ami", str(ami_dir), "--out", str(out), "--report", str(tmp_path / "r.jsonl"), "--task", "you"])
    assert res.exit_code == 0, res.output
    assert {r["task"] for r in records(out)} == {"you"}


def test_mine_unknown_task_is_a_config_error(ami_dir, tmp_path):
    res = runner.invoke(meetingtom_app, ["mine", "--ami", str(ami_dir), "--out", str(tmp_path / "c.jsonl"), "--report", str(tmp_path / "r.jsonl"), "--task", "mood"])
    assert isinstance(res.exception, ConfigError)


def test_mine_output_is_byte_identical_on_a_rerun(ami_dir, tmp_path):
    outs = []
    for n in (1, 2):
        out = tmp_path / f"c{n}.jsonl"
        runner.invoke(meetingtom_app, ["mine", "--ami", str(ami_dir), "--out", str(out), "--report", str(tmp_path / f"r{n}.jsonl")])
        outs.append(out.read_bytes() + (tmp_path / f"r{n}.jsonl").read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.shared
def test_you_events_on_the_real_annotations_match_the_function(real_ami, real_corpus, tmp_path):
    from socialbench.meetingtom.ami.you_events import you_events

    out = tmp_path / "you.jsonl"
    some = ("IS1001a", "IS1003b")
    res = runner.invoke(meetingtom_app, ["you-events", "--ami", str(real_ami), "--out", str(out), "--meeting", some[0], "--meeting", some[1]])
    assert res.exit_code == 0, res.output
    expected = you_events([m for m in real_corpus.meetings if m.id in some])
    assert len(expected) > 50
    assert records(out) == [json.loads(json.dumps(e.as_dict())) for e in expected]


# ---- the pipeline stages, in order, on the demo release and the tiny AMI folder ------------------
def write_params(path, ami_dir, **mt):
    import yaml

    section = {"demo": {"corpus": ["ES9000a", "ES9000b"], "meetings": ["ES9000a"]},
               "ami": {"mirror": str(ami_dir), "meetings": [MEETING]}, "dev_meetings": [], "clips": {"tasks": ["you"]}, **mt}  # fmt: skip
    path.write_text(yaml.safe_dump({"seed": 7, "models": {"random": {"backend": "random", "category": "baseline"}}, "meetingtom": section}))
    return path


@pytest.fixture
def staged(tmp_path, monkeypatch, demo_mirror, ami_dir):
    """A work folder with the demo mirror where the pipeline expects it and a params file."""
    import shutil

    from socialbench.meetingtom.settings import DEMO_MIRROR

    monkeypatch.chdir(tmp_path)
    shutil.copytree(demo_mirror, tmp_path / DEMO_MIRROR)
    return write_params(tmp_path / "params.yaml", ami_dir)


def invoke(*args):
    res = runner.invoke(meetingtom_app, [str(a) for a in args])
    assert res.exit_code == 0, (res.output, res.exception)
    return res.output


def test_the_stages_run_from_release_to_the_task_files(staged):
    p = ["--params", staged]
    assert "mirror-archive" in invoke("release", "--source", "demo", "--out", "rel/demo", "--downloads", "dl/demo", *p)
    assert "mirror-folder" in invoke("release", "--source", "ami", "--out", "rel/ami", "--downloads", "dl/ami", *p)
    invoke("media", "--source", "demo", "--meeting", "ES9000a", "--dest-root", "raw/demo", *p)
    invoke("extract", "--source", "demo", "--meeting", "ES9000a", "--release", "rel/demo", "--out-dir", "mt/demo/ES9000a", *p)
    assert "2 clip(s), 0 failed" in invoke("clips", "--meeting-dir", "mt/demo/ES9000a", "--fetched", "raw/demo/amicorpus/ES9000a/fetched.json",
                                            "--out-dir", "clips/demo/ES9000a", *p)  # fmt: skip
    invoke("media", "--source", "ami", "--meeting", MEETING, "--dest-root", "raw/ami", *p)
    invoke("extract", "--source", "ami", "--meeting", MEETING, "--release", "rel/ami", "--out-dir", f"mt/ami/{MEETING}", *p)
    invoke("clips", "--meeting-dir", f"mt/ami/{MEETING}", "--fetched", f"raw/ami/amicorpus/{MEETING}/fetched.json",
           "--out-dir", f"clips/ami/{MEETING}", *p)  # fmt: skip
    assert "2 Task 2.1 instance(s)" in invoke("instances", "--source", "demo", "--release", "rel/demo", "--meetings-dir", "mt/demo",
                                              "--clips-dir", "clips/demo", "--out-dir", "inst/demo", *p)  # fmt: skip
    invoke("instances", "--source", "ami", "--release", "rel/ami", "--meetings-dir", "mt/ami", "--clips-dir", "clips/ami",
           "--out-dir", "inst/ami", *p)  # fmt: skip
    assert "3 test, 0 dev" in invoke("consolidate", "--source-dir", "inst/demo", "--source-dir", "inst/ami", "--out-dir", "out")
    test = records("out/test.jsonl")
    assert [i["source"] for i in test] == ["ami", "demo", "demo"] and records("out/tasks/task2_1.jsonl") == test
    demo = [i for i in test if i["source"] == "demo"]
    assert all(i["modality"] == "both" and i["media"]["videos"]["mosaic"]["path"].startswith("clips/demo/ES9000a/") for i in demo)


def test_an_absent_real_mirror_makes_empty_outputs_with_its_note(staged, tmp_path, ami_dir):
    write_params(staged, tmp_path / "no-such-mirror")
    p = ["--params", staged]
    assert "note: AMI mirror" in invoke("release", "--source", "ami", "--out", "rel/ami", "--downloads", "dl/ami", *p)
    invoke("extract", "--source", "ami", "--meeting", MEETING, "--release", "rel/ami", "--out-dir", f"mt/ami/{MEETING}", *p)
    out = invoke("instances", "--source", "ami", "--release", "rel/ami", "--meetings-dir", "mt/ami", "--clips-dir", "clips/ami",
                 "--out-dir", "inst/ami", *p)  # fmt: skip
    assert "none; note: AMI mirror" in out
    assert (tmp_path / "inst/ami/task2_1.jsonl").read_text() == ""
    assert json.loads((tmp_path / "inst/ami/source.json").read_text())["present"] is False


def test_a_meeting_not_in_the_params_list_is_refused(staged):
    res = runner.invoke(meetingtom_app, ["media", "--source", "demo", "--meeting", "ES9000b", "--dest-root", "raw", "--params", str(staged)])
    assert isinstance(res.exception, ConfigError) and "meetingtom.demo.meetings: ES9000b is not listed" in str(res.exception)


def test_the_commands_are_mounted_on_the_main_app():
    from socialbench.cli import app

    res = CliRunner().invoke(app, ["meetingtom", "--help"])
    assert res.exit_code == 0 and "consolidate" in res.output and "you-events" in res.output


def test_an_output_naming_another_output_is_refused_before_anything_is_read(ami_dir, tmp_path):
    same = tmp_path / "events.jsonl"
    result = runner.invoke(meetingtom_app, ["mine", "--ami", str(ami_dir), "--out", str(same), "--report", str(same)])
    assert result.exit_code != 0 and isinstance(result.exception, ConfigError)
    assert "--out and --report name the same file" in str(result.exception) and not same.exists()


def test_an_output_folder_that_is_an_input_folder_is_refused(ami_dir, tmp_path):
    result = runner.invoke(meetingtom_app, ["consolidate", "--source-dir", str(tmp_path), "--out-dir", str(tmp_path)])
    assert result.exit_code != 0 and isinstance(result.exception, ConfigError)
    assert "--out-dir is the same file as --source-dir" in str(result.exception)
