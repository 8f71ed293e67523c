"""The annotation round-trip (B.2-B.3): sheets out, annotations, review and arbitration back, the
final benchmark in the instance schema, and every other candidate in the report with its reason."""

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from socialbench.cli import app
from socialbench.core.errors import DataError
from socialbench.moca.dataset.annotation import Version, compare, final_problems, find_disputes, options
from socialbench.moca.dataset.sources.base import candidate
from socialbench.moca.schema.instances import load_instances

runner = CliRunner()

GOOD = {
    "scenario": "intent",
    "domain": "peer",
    "culture": "general context",
    "subject": "the speaker",
    "target": "the friend",
    "mechanism": "expressive aggression",
    "label": "mock",
    "subject_options": "the speaker|the friend|the waiter|the crowd",
    "target_options": "the friend|the speaker|the waiter|the crowd",
    "evidence": "smirk while saying 'nice job'",
}


def version(**over):
    return Version("ann", "annotator", {**GOOD, **over})


# ---- structural agreement -------------------------------------------------------------------------


def test_identical_tuples_agree_after_normalisation():
    assert compare(version(), version(label="Mock", mechanism="Expressive-Aggression", subject="The Speaker")) == []


def test_a_matching_label_with_another_subject_is_a_disagreement():
    assert compare(version(), version(subject="the waiter")) == ["subject"]


def test_a_reversed_direction_is_a_disagreement_even_with_the_same_label():
    assert compare(version(), version(subject="the friend", target="the speaker")) == ["direction_reversed"]


def test_a_mechanism_outside_the_scenario_is_disputed(taxonomy):
    disputes = find_disputes({"c": [version(mechanism="affective deception")]}, {}, taxonomy)
    assert disputes == {"c": ["invalid:mechanism (ann)"]}


def test_unsupported_evidence_and_discard_proposals_are_disputed(taxonomy):
    disputes = find_disputes(
        {"a": [version()], "b": [version(discard_reason="no social meaning")]}, {"a": True}, taxonomy
    )
    assert disputes == {"a": ["evidence_unsupported"], "b": ["discard_proposed"]}


# ---- final validation -----------------------------------------------------------------------------


def test_a_complete_valid_tuple_passes_final_validation(taxonomy):
    assert final_problems(version(), taxonomy) == []


def test_final_validation_wants_a_directed_relation(taxonomy):
    problems = dict(final_problems(version(target="the speaker"), taxonomy))
    assert "directed relation" in problems["target"]


def test_final_validation_wants_the_gold_among_four_distinct_options(taxonomy):
    problems = dict(final_problems(version(subject_options="the speaker|the speaker|a|b"), taxonomy))
    assert "4 distinct options" in problems["subject_options"]
    problems = dict(final_problems(version(target="the boss", target_options="a|b|c|d"), taxonomy))
    assert "'the boss' is not among the options" in problems["target_options"]


def test_final_validation_wants_evidence(taxonomy):
    assert dict(final_problems(version(evidence=""), taxonomy))["evidence"].startswith("no evidence")


def test_options_are_split_on_the_bar_and_trimmed():
    assert options(" a | b|c |  d ") == ["a", "b", "c", "d"]


# ---- the round trip through the commands ----------------------------------------------------------


def read_csv(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def write_csv(path, rows):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def invoke(*args):
    res = runner.invoke(app, ["moca", *map(str, args)])
    assert res.exit_code == 0, (res.output, res.exception)
    return res


@pytest.fixture
def pool(tmp_path):
    recs = [
        candidate(
            "mmsd2",
            f"c{k}",
            split="valid",
            modality="image_text",
            text=f"nice job genius {k}",
            media=[f"data/raw/img{k}.jpg"],
            origin_file="valid.json",
            origin_record=str(k),
        )
        for k in range(1, 7)
    ]
    recs.append(
        candidate(
            "mustard",
            "1_60",
            split="all",
            modality="video_text",
            text="Oh, great.",
            speaker="CHANDLER",
            context=[{"speaker": "ROSS", "text": "I got fired."}],
            media=["data/raw/1_60.mp4"],
            origin_file="sarcasm_data.json",
            origin_record="1_60",
        )
    )
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


#: What each candidate's annotator writes (None: left blank).
ANNOTATED = {
    "mmsd2:c1": GOOD,
    "mmsd2:c2": GOOD,
    "mmsd2:c3": {"discard_reason": "a plain product photo, no social meaning"},
    "mmsd2:c4": GOOD,
    "mmsd2:c5": None,
    "mmsd2:c6": {**GOOD, "label": "sad"},
    "mustard:1_60": {
        **GOOD,
        "scenario": "affection",
        "mechanism": "affective deception",
        "label": "angry",
        "subject": "Chandler",
        "target": "Ross",
        "subject_options": "Chandler|Ross|Monica|Joey",
        "target_options": "Ross|Chandler|Monica|Joey",
        "evidence": "flat tone after the news",
    },
}
#: What the reviewer changes (fields they disagree with).
REVIEWED = {"mmsd2:c2": {"subject": "the friend", "target": "the speaker"}, "mmsd2:c4": {"subject": "the waiter"}}
#: The arbiter's decisions on the disputed candidates.
DECIDED = {
    "mmsd2:c2": {"decision": "revise", "subject": "the speaker", "target": "the friend", "label": "provoke"},
    "mmsd2:c3": {"decision": "reject", "reason": "no implicit social meaning"},
    "mmsd2:c6": {"decision": "retain"},
}


def test_the_round_trip_builds_validated_instances_and_reports_every_other_candidate(pool, tmp_path, taxonomy):
    invoke(
        "annotate",
        "export",
        "--pool",
        pool,
        "--out-dir",
        tmp_path / "ann",
        "--annotator",
        "alice",
        "--annotator",
        "bob",
        "--seed",
        3,
    )
    assert "## intent" in (tmp_path / "ann" / "codebook.md").read_text()
    sheets = sorted((tmp_path / "ann" / "sheets").glob("*.csv"))
    assert [s.stem for s in sheets] == ["alice", "bob"]
    for sheet in sheets:
        rows = read_csv(sheet)
        for row in rows:
            row.update(ANNOTATED[row["id"]] or {})
        write_csv(sheet, rows)
    ann_args = [a for s in sheets for a in ("--annotations", s)]

    invoke("annotate", "review", "--pool", pool, *ann_args, "--reviewer", "carol", "--out-dir", tmp_path / "rev")
    review = tmp_path / "rev" / "carol.csv"
    rows = read_csv(review)
    assert {r["id"] for r in rows} == {"mmsd2:c1", "mmsd2:c2", "mmsd2:c4", "mmsd2:c6", "mustard:1_60"}
    for row in rows:
        row.update(REVIEWED.get(row["id"], {}))
        row["evidence_supported"] = "yes"
    write_csv(review, rows)

    arb = tmp_path / "arbitration.csv"
    invoke("annotate", "arbitration", "--pool", pool, *ann_args, "--reviews", review, "--out", arb)
    rows = read_csv(arb)
    disputes = {r["id"]: r["disagreements"] for r in rows}
    assert set(disputes) == {"mmsd2:c2", "mmsd2:c3", "mmsd2:c4", "mmsd2:c6"}
    assert disputes["mmsd2:c2"].startswith("direction_reversed") and disputes["mmsd2:c4"].startswith("subject")
    assert "invalid:label" in disputes["mmsd2:c6"] and disputes["mmsd2:c3"] == "discard_proposed"
    for row in rows:
        row.update(DECIDED.get(row["id"], {}), arbiter="dana")
    write_csv(arb, rows)

    out, report, agreement = tmp_path / "moca.jsonl", tmp_path / "report.jsonl", tmp_path / "agreement.json"
    invoke(
        "annotate",
        "build",
        "--pool",
        pool,
        *ann_args,
        "--reviews",
        review,
        "--arbitration",
        arb,
        "--out",
        out,
        "--report",
        report,
        "--agreement",
        agreement,
    )
    instances = load_instances(out, taxonomy)  # the instance schema, validated
    assert [i["id"] for i in instances] == ["mmsd2:c1", "mmsd2:c2", "mustard:1_60"]
    assert instances[1]["label"] == "provoke"  # the arbiter's revision
    assert (
        instances[2]["transcript"] == "ROSS: I got fired.\nCHANDLER: Oh, great."
        and instances[2]["subject"] == "Chandler"
    )
    reasons = {r["id"]: r["reason"] for r in map(json.loads, report.read_text().splitlines())}
    assert reasons == {
        "mmsd2:c3": "rejected",
        "mmsd2:c4": "unresolved_dispute",
        "mmsd2:c5": "not_annotated",
        "mmsd2:c6": "final_validation",
    }
    summary = json.loads(agreement.read_text())
    assert summary["pool"] == 7 and summary["instances"] == 3 and summary["disputed"] == 4
    assert summary["disagreements_by_field"] == {"direction_reversed": 1, "subject": 1}


def test_the_export_is_byte_identical_for_the_same_seed(pool, tmp_path):
    for k in (1, 2):
        invoke(
            "annotate",
            "export",
            "--pool",
            pool,
            "--out-dir",
            tmp_path / f"a{k}",
            "--annotator",
            "alice",
            "--annotator",
            "bob",
            "--per-item",
            2,
            "--seed",
            9,
        )
    for name in ("alice.csv", "bob.csv"):
        assert (tmp_path / "a1/sheets" / name).read_bytes() == (tmp_path / "a2/sheets" / name).read_bytes()
    assert (tmp_path / "a1/assignment.csv").read_bytes() == (tmp_path / "a2/assignment.csv").read_bytes()


def test_a_sheet_row_naming_an_unknown_candidate_is_an_error_naming_file_and_line(pool, tmp_path):
    sheet = tmp_path / "alice.csv"
    write_csv(
        sheet,
        [{"id": "mmsd2:nope", "annotator": "alice", **{k: "" for k in GOOD}, "rationale": "", "discard_reason": ""}],
    )
    res = runner.invoke(
        app,
        [
            "moca",
            "annotate",
            "build",
            "--pool",
            str(pool),
            "--annotations",
            str(sheet),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--report",
            str(tmp_path / "r.jsonl"),
        ],
    )
    assert isinstance(res.exception, DataError)
    assert str(res.exception) == f"{sheet}, record line 2, field 'id': id 'mmsd2:nope' is not in the candidate pool"


def test_a_sheet_without_a_codebook_column_names_it(pool, tmp_path):
    sheet = tmp_path / "alice.csv"
    sheet.write_text("id,annotator,scenario\nmmsd2:c1,alice,intent\n")
    res = runner.invoke(
        app,
        [
            "moca",
            "annotate",
            "build",
            "--pool",
            str(pool),
            "--annotations",
            str(sheet),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--report",
            str(tmp_path / "r.jsonl"),
        ],
    )
    assert isinstance(res.exception, DataError) and "field 'domain': missing column(s) 'domain'" in str(res.exception)


def test_a_reviewer_may_not_review_their_own_annotation(pool, tmp_path):
    invoke("annotate", "export", "--pool", pool, "--out-dir", tmp_path / "ann", "--annotator", "alice")
    sheet = tmp_path / "ann" / "sheets" / "alice.csv"
    rows = read_csv(sheet)
    for row in rows:
        row.update(GOOD)
    write_csv(sheet, rows)
    res = runner.invoke(
        app,
        [
            "moca",
            "annotate",
            "review",
            "--pool",
            str(pool),
            "--annotations",
            str(sheet),
            "--reviewer",
            "alice",
            "--out-dir",
            str(tmp_path / "rev"),
        ],
    )
    assert isinstance(res.exception, DataError) and "every reviewer annotated this candidate" in str(res.exception)


def test_annotators_must_be_distinct_and_enough_for_the_annotations_per_item():
    from socialbench.core.errors import ConfigError
    from socialbench.moca.dataset.annotation import assign

    with pytest.raises(ConfigError, match="expected distinct names"):
        assign(["a"], ["alice", "alice"], 1, 0)
    with pytest.raises(ConfigError, match="3 per item needs at least that many people"):
        assign(["a"], ["alice", "bob"], 3, 0)
