import json

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.schema.instances import all_problems, canonical_gold, load_instances
from tests.conftest import make_instance


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_valid_file_loads(tmp_path, taxonomy):
    path = write(tmp_path / "ok.jsonl", [make_instance("a"), make_instance("b", scenario="stance")])
    assert [r["id"] for r in load_instances(path, taxonomy)] == ["a", "b"]


def test_bad_modality_names_file_record_and_field(tmp_path, taxonomy):
    path = write(tmp_path / "bad.jsonl", [make_instance("a"), make_instance("b", modality="audio")])
    with pytest.raises(DataError) as exc:
        load_instances(path, taxonomy)
    assert exc.value.path.endswith("bad.jsonl") and exc.value.record == "b" and exc.value.field == "modality"
    assert "bad.jsonl, record b, field 'modality'" in str(exc.value)


def test_three_subject_options_is_rejected(tmp_path, taxonomy):
    path = write(tmp_path / "bad.jsonl", [make_instance("a", subject_options=["the speaker", "x", "y"])])
    with pytest.raises(DataError) as exc:
        load_instances(path, taxonomy)
    assert exc.value.field == "subject_options"


def test_missing_field_is_named(tmp_path, taxonomy):
    rec = make_instance("a")
    del rec["culture"]
    with pytest.raises(DataError) as exc:
        load_instances(write(tmp_path / "m.jsonl", [rec]), taxonomy)
    assert (exc.value.record, exc.value.field) == ("a", "culture")


def test_label_from_another_scenario_is_rejected(tmp_path, taxonomy):
    path = write(tmp_path / "x.jsonl", [make_instance("a", label="happy")])
    with pytest.raises(DataError) as exc:
        load_instances(path, taxonomy)
    assert exc.value.field == "label" and "is not a label of scenario 'intent'" in str(exc.value)


def test_gold_subject_outside_options_is_rejected(tmp_path, taxonomy):
    path = write(tmp_path / "x.jsonl", [make_instance("a", subject="someone else")])
    with pytest.raises(DataError) as exc:
        load_instances(path, taxonomy)
    assert exc.value.field == "subject"


def test_duplicate_id_is_rejected(tmp_path, taxonomy):
    path = write(tmp_path / "x.jsonl", [make_instance("a"), make_instance("a")])
    with pytest.raises(DataError, match="uniqueness|duplicate id"):
        load_instances(path, taxonomy)


def test_broken_json_line_is_named(tmp_path, taxonomy):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(make_instance("a")) + "\n{not json\n")
    with pytest.raises(DataError) as exc:
        load_instances(path, taxonomy)
    assert exc.value.record == "line 2"


# ---- readable reasons, duplicates, frames ---------------------------------------------------------

HEX = "ab" * 32


def frame(k=0, **over):
    return {"path": f"data/interim/frames/ab/x/{k:06d}.png", "sha256": HEX, "index": k, "timestamp": k * 0.5, **over}


def test_wrong_type_reason_names_the_expected_type_and_the_original_value(taxonomy):
    problems = all_problems([make_instance("a", text=42)], taxonomy)[0]
    assert problems == [("text", "expected a string, got int 42")]


def test_an_instance_without_media_is_refused(taxonomy):
    problems = all_problems([make_instance("a"), make_instance("b", media=[])], taxonomy)
    assert problems == [[], [("media", "expected a non-empty list of paths, got list []")]]


def test_null_id_reason_says_null_not_nan(taxonomy):
    problems = all_problems([make_instance(None)], taxonomy)[0]
    assert problems == [("id", "expected a non-empty string, got null")]


def test_numeric_transcript_reason_shows_the_value_as_written_not_coerced(taxonomy):
    problems = all_problems([make_instance("a"), make_instance("b", transcript=5)], taxonomy)
    assert problems == [[], [("transcript", "expected a string or null, got int 5")]]


def test_unknown_modality_reason_lists_the_allowed_values(taxonomy):
    problems = all_problems([make_instance("a", modality="audio")], taxonomy)[0]
    assert problems == [("modality", "expected one of 'image_text', 'video_text', got 'audio'")]


def test_a_field_failing_several_checks_gets_one_reason(taxonomy):
    rec = {**make_instance("a"), "scenario": ["intent"]}
    problems = all_problems([rec], taxonomy)[0]
    assert problems == [("scenario", "expected one of 'affection', 'intent', 'stance', got list [\"intent\"]")]


def test_duplicate_ids_drop_every_copy_each_naming_the_other_lines(taxonomy):
    recs = [make_instance("a"), make_instance("b"), make_instance("a"), make_instance("a")]
    problems = all_problems(recs, taxonomy, lines=[1, 2, 4, 7])
    assert problems[0] == [("id", "duplicate id, also on lines 4, 7")]
    assert problems[2] == [("id", "duplicate id, also on lines 1, 7")]
    assert problems[3] == [("id", "duplicate id, also on lines 1, 4")]
    assert problems[1] == []


def test_duplicate_id_error_of_a_loaded_file_names_the_other_line(tmp_path, taxonomy):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(make_instance("a")) + "\n\n" + json.dumps(make_instance("a")) + "\n")
    with pytest.raises(DataError) as exc:
        load_instances(path, taxonomy)
    assert (exc.value.record, exc.value.field) == ("a", "id") and "duplicate id, also on line 3" in str(exc.value)


def test_well_formed_frames_pass(taxonomy):
    rec = make_instance("v", modality="video_text", frames=[frame(0), frame(1)])
    assert all_problems([rec], taxonomy) == [[]]


@pytest.mark.parametrize(
    "frames, reason",
    [
        ("notalist", "expected a non-empty list of frames"),
        ([], "expected a non-empty list of frames"),
        (["f.png"], "frame 0: expected an object with path, sha256, index, timestamp, got 'f.png'"),
        ([{"path": "f.png"}], "frame 0: missing sha256, timestamp"),
        ([frame(0, sha256="abc")], "frame 0: sha256: expected 64 lowercase hex digits, got 'abc'"),
        ([frame(0, timestamp="0.5")], "frame 0: timestamp: expected a number of seconds >= 0, got '0.5'"),
        ([frame(0, index=-1)], "frame 0: index: expected an integer >= 0, got int -1"),
        ([frame(2), frame(1)], "frame 1: timestamp 0.5 is before the previous frame's (1.0)"),
    ],
)
def test_malformed_frames_are_a_problem_of_field_frames(tmp_path, taxonomy, frames, reason):
    path = write(tmp_path / "x.jsonl", [make_instance("v", modality="video_text", frames=frames)])
    with pytest.raises(DataError) as exc:
        load_instances(path, taxonomy)
    assert (exc.value.record, exc.value.field) == ("v", "frames") and reason in str(exc.value)


# ---- gold normalized as the scorer normalizes (section 3.3) ---------------------------------
def test_gold_in_another_case_or_separator_loads_in_its_canonical_spelling(tmp_path, taxonomy):
    rec = make_instance(
        "a", label="Mock", mechanism="Expressive_Aggression", subject="The  Speaker", target="the-player"
    )
    (loaded,) = load_instances(write(tmp_path / "g.jsonl", [rec]), taxonomy)
    assert (loaded["label"], loaded["mechanism"], loaded["subject"], loaded["target"]) == (
        "mock",
        "expressive aggression",
        "the speaker",
        "the player",
    )


def test_canonical_gold_leaves_its_input_unchanged(taxonomy):
    rec = make_instance("a", label="MOCK")
    assert canonical_gold(rec, taxonomy)["label"] == "mock" and rec["label"] == "MOCK"


def test_options_the_scorer_cannot_tell_apart_are_a_problem_of_the_options_field(taxonomy):
    rec = make_instance("a", subject_options=["the speaker", "The Speaker", "the fan", "the referee"])
    assert all_problems([rec], taxonomy)[0] == [
        ("subject_options", "'the speaker' and 'The Speaker' are the same option after normalization")
    ]


# ---- media_error: kept by the media stage, answered without a call ---------------------------
def test_a_video_instance_marked_media_error_without_frames_loads(tmp_path, taxonomy):
    rec = make_instance("v", modality="video_text", transcript="A: hi", media_error="clip.mp4: truncated")
    (loaded,) = load_instances(write(tmp_path / "m.jsonl", [rec]), taxonomy)
    assert loaded["media_error"] == "clip.mp4: truncated"


@pytest.mark.parametrize(
    "extra, reason",
    [
        ({"media_error": ""}, "expected a non-empty string (the media problem), got an empty string"),
        ({"media_error": 3}, "expected a non-empty string (the media problem), got int 3"),
        (
            {
                "media_error": "bad clip",
                "frames": [{"path": "f.png", "sha256": "a" * 64, "index": 0, "timestamp": 0.0}],
            },
            "a record with media_error has no frames (the media stage writes one or the other)",
        ),
    ],
)
def test_a_malformed_media_error_is_a_problem_of_its_field(taxonomy, extra, reason):
    rec = make_instance("v", modality="video_text", transcript="A: hi", **extra)
    assert ("media_error", reason) in all_problems([rec], taxonomy)[0]
