"""``socialbench meetingtom ...`` commands, invoked on the sub-app with typer's CliRunner: the data
stages, the annotation round-trip (simulated annotators: a test double) and the task files."""

import csv
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from socialbench.core.errors import ConfigError, DataError
from socialbench.core.io import read_jsonl_lines
from socialbench.meetingtom.cli import meetingtom_app
from tests.meetingtom.tiny_ami import MEETING

runner = CliRunner()


def records(path):
    return [line.record for line in read_jsonl_lines(path)]


def test_you_events_writes_one_json_line_per_event(ami_dir, tmp_path):
    out = tmp_path / "you.jsonl"
    res = runner.invoke(meetingtom_app, ["you-events", "--ami", str(ami_dir), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert records(out) == [
        {
            "meeting": MEETING,
            "speaker": "A",
            "word_id": f"{MEETING}.A.words3",
            "start": 10.8,
            "end": 11.0,
            "addressee": "B",
        }
    ]
    assert "1 events from 1 meetings" in res.output


def test_you_events_writes_parse_problems_when_asked(ami_dir, tmp_path):
    problems = tmp_path / "problems.jsonl"
    res = runner.invoke(
        meetingtom_app,
        ["you-events", "--ami", str(ami_dir), "--out", str(tmp_path / "y.jsonl"), "--problems", str(problems)],
    )
    assert res.exit_code == 0, res.output
    assert {r["kind"] for r in records(problems)} == {"missing_layer"}
    assert set(records(problems)[0]) == {"meeting", "file", "element", "kind", "message"}


def test_you_events_on_a_missing_folder_is_a_data_error(tmp_path):
    res = runner.invoke(
        meetingtom_app, ["you-events", "--ami", str(tmp_path / "nope"), "--out", str(tmp_path / "y.jsonl")]
    )
    assert isinstance(res.exception, DataError)  # the main CLI prints it as one line, exit status 2
    assert not (tmp_path / "y.jsonl").exists()


def test_you_events_strict_stops_at_an_annotation_error(ami_dir, tmp_path):
    (ami_dir / f"dialogueActs/{MEETING}.A.dialog-act.xml").write_text("<nite:root")
    res = runner.invoke(
        meetingtom_app, ["you-events", "--ami", str(ami_dir), "--out", str(tmp_path / "y.jsonl"), "--strict"]
    )
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
    res = runner.invoke(
        meetingtom_app,
        ["mine", "--ami", str(ami_dir), "--out", str(out), "--report", str(tmp_path / "r.jsonl"), "--task", "you"],
    )
    assert res.exit_code == 0, res.output
    assert {r["task"] for r in records(out)} == {"you"}


def test_mine_unknown_task_is_a_config_error(ami_dir, tmp_path):
    res = runner.invoke(
        meetingtom_app,
        [
            "mine",
            "--ami",
            str(ami_dir),
            "--out",
            str(tmp_path / "c.jsonl"),
            "--report",
            str(tmp_path / "r.jsonl"),
            "--task",
            "mood",
        ],
    )
    assert isinstance(res.exception, ConfigError)


def test_mine_output_is_byte_identical_on_a_rerun(ami_dir, tmp_path):
    outs = []
    for n in (1, 2):
        out = tmp_path / f"c{n}.jsonl"
        runner.invoke(
            meetingtom_app,
            ["mine", "--ami", str(ami_dir), "--out", str(out), "--report", str(tmp_path / f"r{n}.jsonl")],
        )
        outs.append(out.read_bytes() + (tmp_path / f"r{n}.jsonl").read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.shared
def test_you_events_on_the_real_annotations_match_the_function(real_ami, real_corpus, tmp_path):
    from socialbench.meetingtom.dataset.ami.you_events import you_events

    out = tmp_path / "you.jsonl"
    some = ("IS1001a", "IS1003b")
    res = runner.invoke(
        meetingtom_app,
        ["you-events", "--ami", str(real_ami), "--out", str(out), "--meeting", some[0], "--meeting", some[1]],
    )
    assert res.exit_code == 0, res.output
    expected = you_events([m for m in real_corpus.meetings if m.id in some])
    assert len(expected) > 50
    assert records(out) == [json.loads(json.dumps(e.as_dict())) for e in expected]


# ---- the pipeline stages, in order, on the demo release and the tiny AMI folder ------------------
def write_params(path, ami_dir, **mt):
    import yaml

    section = {
        "demo": {"corpus": ["ES9000a", "ES9000b"], "meetings": ["ES9000a"]},
        "ami": {"mirror": str(ami_dir), "meetings": [MEETING]},
        "dev_meetings": [],
        "clips": {"tasks": ["you"]},
        **mt,
    }
    path.write_text(
        yaml.safe_dump(
            {"seed": 7, "models": {"random": {"backend": "random", "category": "baseline"}}, "meetingtom": section}
        )
    )
    return path


@pytest.fixture
def staged(tmp_path, monkeypatch, demo_mirror, ami_dir):
    """A work folder with the demo mirror where the pipeline expects it and a params file."""
    import shutil

    from socialbench.meetingtom.schema.settings import DEMO_MIRROR

    monkeypatch.chdir(tmp_path)
    shutil.copytree(demo_mirror, tmp_path / DEMO_MIRROR)
    return write_params(tmp_path / "params.yaml", ami_dir)


def invoke(*args):
    res = runner.invoke(meetingtom_app, [str(a) for a in args])
    assert res.exit_code == 0, (res.output, res.exception)
    return res.output


def import_without_sheets(*sources):
    for s in sources:
        invoke(
            "annotate",
            "import",
            "--items",
            f"inst/{s}/items.jsonl",
            "--subset",
            f"inst/{s}/agreement_subset.json",
            "--out-dir",
            f"gold/{s}",
        )


@pytest.mark.slow
def test_the_stages_run_from_release_to_the_task_files(staged):
    p = ["--params", staged]
    assert "mirror-archive" in invoke("release", "--source", "demo", "--out", "rel/demo", "--downloads", "dl/demo", *p)
    assert "mirror-folder" in invoke("release", "--source", "ami", "--out", "rel/ami", "--downloads", "dl/ami", *p)
    invoke("media", "--source", "demo", "--meeting", "ES9000a", "--dest-root", "raw/demo", *p)
    invoke(
        "extract",
        "--source",
        "demo",
        "--meeting",
        "ES9000a",
        "--release",
        "rel/demo",
        "--out-dir",
        "mt/demo/ES9000a",
        *p,
    )
    assert "2 clip(s), 0 failed" in invoke(
        "clips",
        "--meeting-dir",
        "mt/demo/ES9000a",
        "--fetched",
        "raw/demo/amicorpus/ES9000a/fetched.json",
        "--out-dir",
        "clips/demo/ES9000a",
        *p,
    )
    invoke("media", "--source", "ami", "--meeting", MEETING, "--dest-root", "raw/ami", *p)
    invoke(
        "extract", "--source", "ami", "--meeting", MEETING, "--release", "rel/ami", "--out-dir", f"mt/ami/{MEETING}", *p
    )
    invoke(
        "clips",
        "--meeting-dir",
        f"mt/ami/{MEETING}",
        "--fetched",
        f"raw/ami/amicorpus/{MEETING}/fetched.json",
        "--out-dir",
        f"clips/ami/{MEETING}",
        *p,
    )
    assert "2 Task 2.1 instance(s)" in invoke(
        "instances",
        "--source",
        "demo",
        "--release",
        "rel/demo",
        "--meetings-dir",
        "mt/demo",
        "--clips-dir",
        "clips/demo",
        "--out-dir",
        "inst/demo",
        *p,
    )
    invoke(
        "instances",
        "--source",
        "ami",
        "--release",
        "rel/ami",
        "--meetings-dir",
        "mt/ami",
        "--clips-dir",
        "clips/ami",
        "--out-dir",
        "inst/ami",
        *p,
    )
    import_without_sheets("demo", "ami")
    assert "3 test (task2_1 3), 0 dev" in invoke(
        "consolidate",
        "--source-dir",
        "inst/demo",
        "--gold-dir",
        "gold/demo",
        "--source-dir",
        "inst/ami",
        "--gold-dir",
        "gold/ami",
        "--out-dir",
        "out",
    )
    test = records("out/test.jsonl")
    assert [i["source"] for i in test] == ["ami", "demo", "demo"] and records("out/tasks/task2_1.jsonl") == test
    demo = [i for i in test if i["source"] == "demo"]
    assert all(
        i["modality"] == "both" and i["media"]["videos"]["mosaic"]["path"].startswith("clips/demo/ES9000a/")
        for i in demo
    )


def test_instances_of_a_source_without_views_need_no_clips_folder(staged):
    # A source whose params request no views has no media or clips jobs (rules/meetingtom.smk): its
    # instances are the same bytes as with the empty clips folders the clips stage writes for it.
    p = ["--params", staged]
    invoke("release", "--source", "ami", "--out", "rel/ami", "--downloads", "dl/ami", *p)
    invoke("media", "--source", "ami", "--meeting", MEETING, "--dest-root", "raw/ami", *p)
    invoke(
        "extract", "--source", "ami", "--meeting", MEETING, "--release", "rel/ami", "--out-dir", f"mt/ami/{MEETING}", *p
    )
    fetched = f"raw/ami/amicorpus/{MEETING}/fetched.json"
    assert "0 clip(s)" in invoke(
        "clips", "--meeting-dir", f"mt/ami/{MEETING}", "--fetched", fetched, "--out-dir", f"clips/ami/{MEETING}", *p
    )
    common = ["--source", "ami", "--release", "rel/ami", "--meetings-dir", "mt/ami", *p]
    invoke("instances", *common, "--clips-dir", "clips/ami", "--out-dir", "with_clips")
    invoke("instances", *common, "--out-dir", "without_clips")
    files = sorted(f.name for f in Path("with_clips").iterdir())
    assert files and files == sorted(f.name for f in Path("without_clips").iterdir())
    assert all((Path("with_clips") / f).read_bytes() == (Path("without_clips") / f).read_bytes() for f in files)


# ---- the annotation round-trip (no media: the items' clips are media errors, which the sheets allow) ------
def prepare(params, *sources):
    """release, extract and instances of each source (demo: ES9000a; ami: the tiny meeting)."""
    p = ["--params", params]
    meetings = {"demo": "ES9000a", "ami": MEETING}
    for s in sources:
        invoke("release", "--source", s, "--out", f"rel/{s}", "--downloads", f"dl/{s}", *p)
        invoke(
            "extract",
            "--source",
            s,
            "--meeting",
            meetings[s],
            "--release",
            f"rel/{s}",
            "--out-dir",
            f"mt/{s}/{meetings[s]}",
            *p,
        )
        invoke(
            "instances",
            "--source",
            s,
            "--release",
            f"rel/{s}",
            "--meetings-dir",
            f"mt/{s}",
            "--clips-dir",
            f"clips/{s}",
            "--out-dir",
            f"inst/{s}",
            *p,
        )


def simulate(params, s):
    return invoke(
        "annotate",
        "simulate",
        "--items",
        f"inst/{s}/items.jsonl",
        "--sheet",
        f"inst/{s}/sheet.csv",
        "--out-dir",
        f"sheets/{s}",
        "--params",
        params,
    )


def import_sheets(s):
    return invoke(
        "annotate",
        "import",
        "--items",
        f"inst/{s}/items.jsonl",
        "--subset",
        f"inst/{s}/agreement_subset.json",
        "--out-dir",
        f"gold/{s}",
        "--annotator",
        f"sheets/{s}/annotator_1.csv",
        "--annotator",
        f"sheets/{s}/annotator_2.csv",
        "--adjudicator",
        f"sheets/{s}/adjudicator.csv",
    )


def consolidate(*sources):
    pairs = [x for s in sources for x in ("--source-dir", f"inst/{s}", "--gold-dir", f"gold/{s}")]
    return invoke("consolidate", *pairs, "--out-dir", "out")


def test_instances_writes_the_items_their_sheet_and_the_agreement_subset(staged):
    from socialbench.meetingtom.schema.instances import load_instances
    from socialbench.meetingtom.schema.questions import ANNOTATED

    prepare(staged, "ami")
    items = load_instances("inst/ami/items.jsonl", items=True)
    assert sorted({i["task"] for i in items}) == sorted(ANNOTATED)
    rows = list(csv.DictReader(Path("inst/ami/sheet.csv").open(newline="")))  # cells hold newlines: the transcript
    assert sorted(r["item_id"] for r in rows) == sorted(i["id"] for i in items) and all(r["answer"] == "" for r in rows)
    subset = json.loads(Path("inst/ami/agreement_subset.json").read_text())
    assert subset and set(subset) <= {i["id"] for i in items}
    assert json.loads(Path("inst/ami/source.json").read_text())["items"] == {
        "task1": 2,
        "task2_2": 1,
        "task3_1": 1,
        "task3_2": 1,
    }


def test_instances_reports_how_the_two_ami_layers_of_the_task2_1_gold_agree(staged):
    prepare(staged, "ami")
    gold = json.loads(Path("inst/ami/source.json").read_text())["task2_1_gold"]
    assert "dialogue-act addressee" in gold["from"]
    assert set(gold["layer_agreement"]) == {"n", "table", "agreement", "kappa", "meetings"}
    assert gold["layer_agreement"]["n"] >= 1


def test_annotate_export_writes_the_sheet_the_instances_stage_wrote(staged):
    prepare(staged, "ami")
    invoke("annotate", "export", "--items", "inst/ami/items.jsonl", "--out", "sheet.csv")
    assert Path("sheet.csv").read_bytes() == Path("inst/ami/sheet.csv").read_bytes()


def test_the_round_trip_makes_valid_task_files_for_all_five_tasks(staged):
    from socialbench.meetingtom.schema.instances import load_instances
    from socialbench.meetingtom.schema.questions import TASKS

    prepare(staged, "demo", "ami")
    for s in ("demo", "ami"):
        simulate(staged, s)
        import_sheets(s)
    consolidate("demo", "ami")
    per_task = {t: load_instances(f"out/tasks/{t}.jsonl") for t in TASKS}  # validated: answer and gold agree
    assert all(i["task"] == t and i["split"] == "test" for t, insts in per_task.items() for i in insts)
    assert all(per_task[t] for t in ("task1", "task2_1", "task2_2", "task3_1"))
    assert sorted(i["id"] for i in records("out/test.jsonl")) == sorted(
        i["id"] for insts in per_task.values() for i in insts
    )


def test_every_item_is_either_an_instance_or_discarded_with_a_reason(staged):
    prepare(staged, "demo")
    simulate(staged, "demo")
    out = import_sheets("demo")
    items = {i["id"] for i in records("inst/demo/items.jsonl")}
    kept = {i["id"] for i in records("gold/demo/instances.jsonl")}
    discarded = records("gold/demo/discarded.jsonl")
    assert kept | {d["item_id"] for d in discarded} == items and not kept & {d["item_id"] for d in discarded}
    assert discarded and all(d["reason"] and d["detail"] for d in discarded)
    assert f"{len(kept)} gold label(s), {len(discarded)} discarded" in out


def test_a_task32_item_of_a_genuine_consensus_is_discarded_as_not_applicable(staged, ami_dir):
    write_params(staged, ami_dir, annotation={"simulated": {"accuracy": 1.0}})  # the rules' labels, no noise
    prepare(staged, "ami")
    simulate(staged, "ami")
    import_sheets("ami")
    (t31,) = [i for i in records("gold/ami/instances.jsonl") if i["task"] == "task3_1"]
    assert t31["gold"] == "genuine_consensus"
    assert [(d["task"], d["reason"]) for d in records("gold/ami/discarded.jsonl")] == [("task3_2", "not_applicable")]


def test_a_pseudo_consensus_clip_gets_a_task32_instance_of_the_same_clip(staged, ami_dir):
    write_params(staged, ami_dir, annotation={"simulated": {"accuracy": 1.0}})
    prepare(staged, "demo")
    simulate(staged, "demo")
    import_sheets("demo")
    insts = records("gold/demo/instances.jsonl")
    (t31,) = [i for i in insts if i["task"] == "task3_1"]
    (t32,) = [i for i in insts if i["task"] == "task3_2"]
    assert t31["gold"] == "pseudo_consensus" and t32["clip_id"] == t31["clip_id"]
    assert t32["gold"] and t32["answer"] == sorted(o["label"] for o in t32["options"] if o["value"] in t32["gold"])


def test_agreement_has_fleiss_kappa_per_annotated_task(staged):
    from socialbench.meetingtom.schema.questions import ANNOTATED

    prepare(staged, "demo")
    simulate(staged, "demo")
    import_sheets("demo")
    agreement = json.loads(Path("gold/demo/agreement.json").read_text())
    assert agreement["note"] is None and sorted(agreement["tasks"]) == sorted(ANNOTATED)
    for rec in agreement["tasks"].values():
        assert (rec["kappa"] is None) == ("note" in rec) and rec["subset"] == "agreement subset"
    assert -1 <= agreement["tasks"]["task1"]["kappa"] <= 1  # five task1 items in the subset: defined


def test_the_simulated_sheets_say_they_are_a_test_double(staged):
    prepare(staged, "ami")
    assert "test double" in simulate(staged, "ami")
    for name in ("annotator_1.csv", "annotator_2.csv", "adjudicator.csv"):
        rows = list(csv.DictReader(Path(f"sheets/ami/{name}").open(newline="")))
        assert rows and all("simulated annotator (test double)" in r["notes"] for r in rows)


def test_the_simulated_round_trip_is_byte_identical_on_a_rerun(staged):
    prepare(staged, "demo")
    outs = []
    for _ in range(2):
        simulate(staged, "demo")
        import_sheets("demo")
        outs.append(
            [
                Path(f"gold/demo/{n}").read_bytes()
                for n in ("gold.jsonl", "instances.jsonl", "discarded.jsonl", "agreement.json")
            ]
        )
    assert outs[0] == outs[1]


def test_simulating_on_a_sheet_of_other_items_is_refused(staged):
    prepare(staged, "ami")
    Path("short.csv").write_text(Path("inst/ami/sheet.csv").read_text().splitlines()[0] + "\n")
    res = runner.invoke(
        meetingtom_app,
        [
            "annotate",
            "simulate",
            "--items",
            "inst/ami/items.jsonl",
            "--sheet",
            "short.csv",
            "--out-dir",
            "sheets",
            "--params",
            str(staged),
        ],
    )
    assert res.exit_code != 0 and "the sheet's rows must be the exported items" in str(res.exception)


def test_import_without_sheets_writes_empty_gold_and_the_note(staged):
    prepare(staged, "ami")
    out = invoke(
        "annotate",
        "import",
        "--items",
        "inst/ami/items.jsonl",
        "--subset",
        "inst/ami/agreement_subset.json",
        "--out-dir",
        "gold/ami",
        "--note",
        "nobody has annotated the real corpus yet",
    )
    assert "no sheets (nobody has annotated the real corpus yet)" in out
    assert records("gold/ami/gold.jsonl") == [] and records("gold/ami/instances.jsonl") == []
    assert json.loads(Path("gold/ami/agreement.json").read_text()) == {
        "note": "nobody has annotated the real corpus yet",
        "tasks": {},
    }
    discarded = records("gold/ami/discarded.jsonl")
    assert len(discarded) == 5 and {d["reason"] for d in discarded} == {"not_annotated"}


def test_import_with_one_annotator_is_refused(staged):
    prepare(staged, "ami")
    simulate(staged, "ami")
    res = runner.invoke(
        meetingtom_app,
        [
            "annotate",
            "import",
            "--items",
            "inst/ami/items.jsonl",
            "--subset",
            "inst/ami/agreement_subset.json",
            "--out-dir",
            "gold/ami",
            "--annotator",
            "sheets/ami/annotator_1.csv",
            "--adjudicator",
            "sheets/ami/adjudicator.csv",
        ],
    )
    assert isinstance(res.exception, ConfigError)
    assert "give two --annotator sheets and one --adjudicator sheet, or none of them" in str(res.exception)
    assert not Path("gold/ami").exists()


def test_import_with_annotators_but_no_adjudicator_is_refused(staged):
    prepare(staged, "ami")
    simulate(staged, "ami")
    res = runner.invoke(
        meetingtom_app,
        [
            "annotate",
            "import",
            "--items",
            "inst/ami/items.jsonl",
            "--subset",
            "inst/ami/agreement_subset.json",
            "--out-dir",
            "gold/ami",
            "--annotator",
            "sheets/ami/annotator_1.csv",
            "--annotator",
            "sheets/ami/annotator_2.csv",
        ],
    )
    assert isinstance(res.exception, ConfigError) and "one --adjudicator sheet" in str(res.exception)


def test_import_refuses_a_malformed_subset_naming_it_before_writing_anything(staged):
    from socialbench.core.errors import SocialbenchError

    prepare(staged, "ami")
    simulate(staged, "ami")
    Path("subset.json").write_text("[not json")
    res = runner.invoke(
        meetingtom_app,
        [
            "annotate",
            "import",
            "--items",
            "inst/ami/items.jsonl",
            "--subset",
            "subset.json",
            "--out-dir",
            "gold/ami",
            "--annotator",
            "sheets/ami/annotator_1.csv",
            "--annotator",
            "sheets/ami/annotator_2.csv",
            "--adjudicator",
            "sheets/ami/adjudicator.csv",
        ],
    )
    assert isinstance(res.exception, SocialbenchError) and "subset.json" in str(res.exception)
    assert not Path("gold/ami/gold.jsonl").exists()


def test_consolidate_refuses_unpaired_source_and_gold_folders(staged):
    prepare(staged, "demo", "ami")
    import_without_sheets("demo", "ami")
    res = runner.invoke(
        meetingtom_app,
        [
            "consolidate",
            "--source-dir",
            "inst/demo",
            "--source-dir",
            "inst/ami",
            "--gold-dir",
            "gold/demo",
            "--out-dir",
            "out",
        ],
    )
    assert isinstance(res.exception, ConfigError)
    assert (
        "one --gold-dir per --source-dir (2 source(s), 1 gold folder(s))" in str(res.exception)
        and not Path("out").exists()
    )


def test_consolidate_names_a_source_folder_given_twice(staged):
    """Issue 33, class 9: the folder is named, not only an instance id."""
    prepare(staged, "ami")
    import_without_sheets("ami")
    pairs = ["--source-dir", "inst/ami", "--gold-dir", "gold/ami"]
    res = runner.invoke(meetingtom_app, ["consolidate", *pairs, *pairs, "--out-dir", "out"])
    assert isinstance(res.exception, ConfigError) and not Path("out").exists()
    assert str(res.exception) == "inst/ami: given as --source-dir twice (number 1 and 2); each source's folder once"


def test_consolidate_names_both_files_of_an_instance_id_in_two_sources(staged):
    prepare(staged, "ami")
    import_without_sheets("ami")
    shutil.copytree("inst/ami", "inst/copy")
    shutil.copytree("gold/ami", "gold/copy")
    res = runner.invoke(
        meetingtom_app,
        [
            "consolidate",
            *[x for s in ("ami", "copy") for x in ("--source-dir", f"inst/{s}", "--gold-dir", f"gold/{s}")],
            "--out-dir",
            "out",
        ],
    )
    assert isinstance(res.exception, DataError) and not Path("out").exists()
    assert "inst/copy/task2_1.jsonl, record" in str(res.exception)
    assert "is also in inst/ami/task2_1.jsonl; each source's ids must differ" in str(res.exception)


def test_consolidate_writes_an_empty_file_for_a_task_without_instances(staged):
    from socialbench.meetingtom.schema.questions import TASKS

    prepare(staged, "ami")
    import_without_sheets("ami")
    assert "1 test (task2_1 1), 0 dev" in consolidate("ami")
    assert {t: len(records(f"out/tasks/{t}.jsonl")) for t in TASKS} == {
        "task1": 0,
        "task2_1": 1,
        "task2_2": 0,
        "task3_1": 0,
        "task3_2": 0,
    }


def test_an_absent_real_mirror_makes_empty_outputs_with_its_note(staged, tmp_path, ami_dir):
    write_params(staged, tmp_path / "no-such-mirror")
    p = ["--params", staged]
    assert "note: AMI mirror" in invoke("release", "--source", "ami", "--out", "rel/ami", "--downloads", "dl/ami", *p)
    invoke(
        "extract", "--source", "ami", "--meeting", MEETING, "--release", "rel/ami", "--out-dir", f"mt/ami/{MEETING}", *p
    )
    out = invoke(
        "instances",
        "--source",
        "ami",
        "--release",
        "rel/ami",
        "--meetings-dir",
        "mt/ami",
        "--clips-dir",
        "clips/ami",
        "--out-dir",
        "inst/ami",
        *p,
    )
    assert "none; note: AMI mirror" in out
    assert (tmp_path / "inst/ami/task2_1.jsonl").read_text() == ""
    assert json.loads((tmp_path / "inst/ami/source.json").read_text())["present"] is False


def test_a_meeting_not_in_the_params_list_is_refused(staged):
    res = runner.invoke(
        meetingtom_app,
        ["media", "--source", "demo", "--meeting", "ES9000b", "--dest-root", "raw", "--params", str(staged)],
    )
    assert isinstance(res.exception, ConfigError) and "meetingtom.demo.meetings: ES9000b is not listed" in str(
        res.exception
    )


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
    result = runner.invoke(
        meetingtom_app,
        [
            "consolidate",
            "--source-dir",
            str(tmp_path),
            "--gold-dir",
            str(tmp_path / "gold"),
            "--out-dir",
            str(tmp_path),
        ],
    )
    assert result.exit_code != 0 and isinstance(result.exception, ConfigError)
    assert "--out-dir is the same file as --source-dir" in str(result.exception)
