"""What the trace viewer shows of a MoCA instance (socialbench.moca.results.viewer) and a MoCA page end to
end (its rows read from its shards, its thumbnails from the media folder)."""

from __future__ import annotations

import hashlib
import json

from PIL import Image
from typer.testing import CliRunner

from socialbench.moca.results.viewer import VIEW_ORDER, row, rows
from tests.conftest import make_instance
from tests.helpers.html_tree import parse, rows_of
from tests.results.test_viewer import drawn_file


def tax_sets(taxonomy):
    return taxonomy.as_sets()


def one_row(taxonomy, inst, pred):
    labels, mechs = tax_sets(taxonomy)
    return row(inst, pred, labels[inst["scenario"]], mechs[inst["scenario"]])


def pred_of(inst, **over):
    p = {
        "id": inst["id"],
        "model": "m",
        "method": "direct",
        "scenario": inst["scenario"],
        "raw": "{}",
        "error": None,
        "field_errors": {},
        "finish_reason": "stop",
        **{k: inst[k] for k in VIEW_ORDER},
    }
    p.update(over)
    return p


def marks(r):
    return {f["name"]: f["correct"] for f in r["fields"]}


def test_fields_come_in_the_papers_order_with_gold_and_prediction(taxonomy):
    inst = make_instance()
    r = one_row(taxonomy, inst, pred_of(inst, label="provoke"))
    assert [f["name"] for f in r["fields"]] == ["subject", "target", "mechanism", "label"]
    assert r["fields"][3]["gold"] == "mock" and r["fields"][3]["pred"] == "provoke"


def test_only_the_wrong_field_is_marked_wrong_and_the_row_is_wrong(taxonomy):
    inst = make_instance()
    r = one_row(taxonomy, inst, pred_of(inst, target="the crowd"))
    assert marks(r) == {"subject": True, "target": False, "mechanism": True, "label": True} and r["correct"] is False


def test_a_case_or_hyphen_difference_is_correct_as_the_scorer_normalizes(taxonomy):
    inst = make_instance()
    r = one_row(taxonomy, inst, pred_of(inst, mechanism="Expressive-Aggression", subject="The Speaker"))
    assert all(marks(r).values()) and r["correct"] is True


def test_a_value_outside_the_options_is_wrong_with_a_note_and_an_invalid_badge(taxonomy):
    inst = make_instance()
    r = one_row(taxonomy, inst, pred_of(inst, subject="the moon"))
    subject = r["fields"][0]
    assert subject["correct"] is False and subject["note"] == "not one of the valid values"
    assert ["invalid", "bad"] in r["badges"]


def test_the_parsers_field_error_is_the_fields_note(taxonomy):
    inst = make_instance()
    r = one_row(
        taxonomy,
        inst,
        pred_of(inst, label=None, field_errors={"label": "missing key 'label'"}, error="missing key 'label'"),
    )
    assert r["fields"][3]["note"] == "missing key 'label'" and r["error"] == "missing key 'label'"


def test_an_instance_without_a_prediction_is_wrong_and_invalid_with_an_error(taxonomy):
    r = one_row(taxonomy, make_instance(), None)
    assert r["correct"] is False and not any(marks(r).values())
    assert r["error"].startswith("no prediction") and ["invalid", "bad"] in r["badges"]


def test_a_truncated_answer_has_a_badge(taxonomy):
    inst = make_instance()
    assert ["truncated", "bad"] in one_row(taxonomy, inst, pred_of(inst, finish_reason="length"))["badges"]


def test_the_row_is_grouped_by_scenario_with_text_and_transcript(taxonomy):
    inst = make_instance(scenario="stance", transcript="A: fine.\nB: sure.")
    r = one_row(taxonomy, inst, pred_of(inst))
    assert (r["group"], r["group_label"]) == ("stance", "scenario")
    assert r["texts"] == [["text", "Nice job, genius."], ["transcript", "A: fine.\nB: sure."]]


def test_a_video_instance_shows_its_sampled_frames_with_their_timestamps(taxonomy):
    frames = [{"path": f"f/{k}.png", "sha256": "ab" * 32, "index": 4 * k, "timestamp": 0.4 * k} for k in range(3)]
    inst = make_instance(modality="video_text", media=["clip.mp4"], frames=frames)
    media = one_row(taxonomy, inst, None)["media"]
    assert [(m["kind"], m["path"], m["caption"]) for m in media] == [
        ("frame", "f/0.png", "t=0.00 s · frame 0"),
        ("frame", "f/1.png", "t=0.40 s · frame 4"),
        ("frame", "f/2.png", "t=0.80 s · frame 8"),
    ]
    assert media[0]["sha256"] == "ab" * 32


def test_a_video_instance_before_sampling_names_its_clip(taxonomy):
    inst = make_instance(modality="video_text", media=["clip.mp4"])
    assert one_row(taxonomy, inst, None)["media"] == [{"kind": "video", "path": "clip.mp4", "caption": "clip.mp4"}]


def test_correct_rows_count_what_the_scorer_counts_as_holistic(taxonomy):
    from socialbench.moca.eval.scoring import score

    insts = [make_instance(f"x-{k}", scenario=s) for k, s in enumerate(["intent", "intent", "stance", "affection"])]
    preds = [
        pred_of(insts[0]),
        pred_of(insts[1], label="provoke"),
        pred_of(insts[2], target="The-Crowd"),
        pred_of(insts[3], subject="the coach", target="the team"),
    ]
    labels, mechs = tax_sets(taxonomy)
    got = rows(insts, {p["id"]: p for p in preds}, {}, labels, mechs)
    scores = score(insts, preds, labels, mechs)
    holistic = sum(round(sc["holis"] * sc["n"] / 100) for sc in scores.values())
    assert sum(r["correct"] for r in got) == holistic == 1


# ---- end to end: a run made by infer, its page made by the viewer command ----------------------
def make_run(tmp_path, monkeypatch, n=6):
    from socialbench.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "media").mkdir(parents=True)
    insts = []
    for k, s in enumerate(["affection", "intent", "stance"] * (n // 3)):
        Image.new("RGB", (400, 300), (40 * k, 90, 160)).save(tmp_path / "data" / "media" / f"{k}.png")
        insts.append(
            make_instance(f"run-{k}", scenario=s, media=[f"data/media/{k}.png"], text=f'<i>case {k}</i> & "quotes"')
        )
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(i) + "\n" for i in insts))
    (tmp_path / "params.yaml").write_text("seed: 3\nmodels:\n  random: {backend: random, category: baseline}\n")
    res = CliRunner().invoke(
        app,
        [
            "infer",
            "--benchmark",
            "moca",
            "--instances",
            "test.jsonl",
            "--model",
            "random",
            "--params",
            "params.yaml",
            "--cache",
            "requests.sqlite",
            "--out",
            "pred.jsonl",
            "--stats",
            "stats.json",
            "--trace",
            "trace.jsonl",
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    return insts


def viewer(out="viewer/run/page.html"):
    from socialbench.cli import app

    res = CliRunner().invoke(
        app,
        [
            "viewer",
            "--benchmark",
            "moca",
            "--instances",
            "test.jsonl",
            "--predictions",
            "pred.jsonl",
            "--traces",
            "trace.jsonl",
            "--out",
            out,
        ],
    )
    assert res.exit_code == 0, res.output
    return res


def test_the_page_of_a_random_run_marks_exactly_the_fields_the_scorer_finds_wrong(tmp_path, monkeypatch, taxonomy):
    from socialbench.moca.eval.scoring import field_matches, instance_valid_sets

    insts = make_run(tmp_path, monkeypatch)
    viewer()
    preds = {p["id"]: p for p in map(json.loads, (tmp_path / "pred.jsonl").read_text().splitlines())}
    labels, mechs = tax_sets(taxonomy)
    for inst, art in zip(insts, rows_of(parse(drawn_file(tmp_path / "viewer/run/page.html")))):
        valid = instance_valid_sets(inst, labels[inst["scenario"]], mechs[inst["scenario"]])
        wrong = [k for k, ok in field_matches(inst, preds[inst["id"]], valid).items() if not ok]
        marked = [tr.attrs["data-field"] for tr in art.find_all("tr", "wrong")]
        assert (art.attrs["data-id"], sorted(marked)) == (inst["id"], sorted(wrong))
        assert art.attrs["data-group"] == inst["scenario"] and art.attrs["data-wrong"].split() == marked


def test_the_page_of_a_run_embeds_each_image_shows_the_calls_and_escapes_the_text(tmp_path, monkeypatch):
    insts = make_run(tmp_path, monkeypatch)
    viewer()
    root = parse(drawn_file(tmp_path / "viewer/run/page.html"))
    arts = rows_of(root)
    imgs = [a.find_all("img") for a in arts]
    assert all(len(i) == 1 and (tmp_path / "viewer/run" / i[0].attrs["src"]).is_file() for i in imgs)
    assert all(i[0].attrs["src"].startswith("../media/") for i in imgs) and len({i[0].attrs["src"] for i in imgs}) == 6
    assert all(len(a.find_all("div", "call")) == 1 for a in arts)
    assert root.find_all("i") == [] and '<i>case 0</i> & "quotes"' in arts[0].text
    groups = [
        o.attrs["value"] for s in root.find_all("select") if s.attrs["id"] == "f-group" for o in s.find_all("option")
    ]
    assert groups == ["", "affection", "intent", "stance"] and len(arts) == len(insts)


def test_the_same_run_gives_the_same_page_bytes(tmp_path, monkeypatch):
    make_run(tmp_path, monkeypatch)
    viewer("a/run/page.html")
    viewer("b/run/page.html")

    def digest(root):
        return {p.relative_to(root): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}

    assert digest(tmp_path / "a") == digest(tmp_path / "b") and len(digest(tmp_path / "a")) == 8


def test_a_missing_image_is_warned_on_stderr_and_marked_in_its_row(tmp_path, monkeypatch):
    make_run(tmp_path, monkeypatch)
    (tmp_path / "data" / "media" / "2.png").unlink()
    res = viewer()
    assert "1 media file(s) not shown" in res.stderr and "run-2: data/media/2.png: file not found" in res.stderr
    (art,) = [a for a in rows_of(parse(drawn_file(tmp_path / "viewer/run/page.html"))) if a.attrs["data-id"] == "run-2"]
    assert art.find_all("figure", "missing") and "file not found" in art.text


# ---- order runs (params moca.robustness, issue 34) --------------------------------------------------
def test_an_order_runs_row_names_its_order_and_the_slots_it_showed(taxonomy):
    from socialbench.moca.eval.prompts import slot_maps

    inst = make_instance("a")
    slots = slot_maps(inst, 3, 1)
    got = one_row(taxonomy, inst, pred_of(inst, slots=slots, order={"index": 1, "shown": 1, "distinct": 4}))
    assert ["option order", "1 (4 distinct orders)"] in got["meta"]
    shown = dict(got["texts"])["slots shown"]
    assert shown.splitlines()[0].startswith(f"subject0: {slots['subject']['subject0']}; ")


def test_a_repeated_order_says_which_order_it_was_shown_as_and_order_0_rows_are_unchanged(taxonomy):
    inst = make_instance("a")
    got = one_row(taxonomy, inst, pred_of(inst, slots={}, order={"index": 2, "shown": 0, "distinct": 2}))
    assert ["option order", "2 (shown as order 0: 2 distinct orders)"] in got["meta"]
    plain = one_row(taxonomy, inst, pred_of(inst))
    assert all(k != "option order" for k, _ in plain["meta"]) and "slots shown" not in dict(plain["texts"])
