import json

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.eval.scoring import (
    check_predictions,
    check_scores,
    normalize,
    parse_scores,
    percent,
    score,
)
from tests.conftest import make_instance

LABELS = {"intent": ["mock", "mitigate", "provoke"]}
MECHS = {"intent": ["expressive aggression", "malicious manipulation"]}


def pred(iid, subject="the speaker", target="the player", mechanism="expressive aggression", label="mock"):
    return {"id": iid, "subject": subject, "target": target, "mechanism": mechanism, "label": label}


def test_normalize_lowercases_maps_separators_and_collapses():
    assert normalize("  Expressive_Aggression ") == "expressive aggression"
    assert normalize("Socio--Cultural  _Dependency") == "socio cultural dependency"
    assert normalize(None) is None


def test_percent_rounds_half_up_to_two_decimals():
    assert percent(1, 3) == 33.33
    assert percent(2, 3) == 66.67
    assert percent(1, 8) == 12.5
    assert percent(0, 0) is None


def test_metrics_match_a_hand_computed_case():
    gold = [make_instance(f"i{k}") for k in range(4)]
    preds = [
        pred("i0"),  # all four correct
        pred("i1", label="provoke"),  # label wrong
        pred("i2", target="the crowd", mechanism="malicious manipulation"),  # target and mechanism wrong
        pred("i3", subject="The_Speaker", label="MOCK"),  # normalization makes these correct
    ]
    s = score(gold, preds, LABELS, MECHS)["intent"]
    # label: i0,i2,i3 = 3/4; subject 4/4; target 3/4; mechanism 3/4
    assert (s["label"], s["subject"], s["target"], s["mechanism"]) == (75.0, 100.0, 75.0, 75.0)
    assert s["dyad"] == 75.0  # i0, i1, i3
    assert s["faith"] == 66.67  # label correct: i0,i2,i3; of those mechanism correct: i0,i3
    assert s["holis"] == 50.0  # i0, i3
    assert s["c_sem_dyad"] == 66.67  # 2 of 3 dyad-correct
    assert s["invalid_rate"] == 0.0
    assert s["n"] == 4


def test_faith_is_null_not_zero_when_no_label_is_correct():
    gold = [make_instance("i0")]
    s = score(gold, [pred("i0", label="provoke")], LABELS, MECHS)["intent"]
    assert s["faith"] is None
    assert s["label"] == 0.0


def test_instance_without_prediction_counts_as_all_incorrect_and_invalid():
    gold = [make_instance("i0"), make_instance("i1")]
    s = score(gold, [pred("i0")], LABELS, MECHS)["intent"]
    assert s["n"] == 2
    assert s["holis"] == 50.0
    assert s["invalid_rate"] == 50.0


def test_scenario_invalid_value_is_incorrect_even_if_it_equals_gold():
    # Gold says "mock" but the scoring taxonomy does not list it for this scenario.
    gold = [make_instance("i0")]
    s = score(gold, [pred("i0")], {"intent": ["provoke"]}, MECHS)["intent"]
    assert s["label"] == 0.0
    assert s["invalid_rate"] == 100.0


def test_null_fields_are_incorrect_and_invalid():
    gold = [make_instance("i0")]
    s = score(gold, [pred("i0", mechanism=None)], LABELS, MECHS)["intent"]
    assert s["mechanism"] == 0.0 and s["label"] == 100.0
    assert s["invalid_rate"] == 100.0


def test_scores_are_grouped_per_scenario():
    gold = [make_instance("a", scenario="intent"), make_instance("b", scenario="stance")]
    labels = {**LABELS, "stance": ["dismissive"]}
    mechs = {**MECHS, "stance": ["dominant detachment"]}
    out = score(gold, [pred("a"), pred("b", mechanism="dominant detachment", label="dismissive")], labels, mechs)
    assert set(out) == {"intent", "stance"}
    assert out["stance"]["holis"] == 100.0 and out["stance"]["n"] == 1


# ---- bad input: predictions ------------------------------------------------------------------


def test_duplicate_prediction_id_names_the_file_its_line_and_the_first_copy():
    gold = [make_instance("i0"), make_instance("i1")]
    with pytest.raises(DataError) as exc:
        score(
            gold,
            [pred("i0"), pred("i1"), pred("i0", label="provoke")],
            LABELS,
            MECHS,
            source="p.jsonl",
            lines=[1, 2, 4],
        )
    assert str(exc.value) == "p.jsonl, record line 4, field 'id': duplicate id 'i0' (first at line 1)"


def test_prediction_whose_id_matches_no_instance_is_an_error():
    with pytest.raises(DataError) as exc:
        score(
            [make_instance("i0")],
            [pred("i0"), pred("other")],
            LABELS,
            MECHS,
            source="p.jsonl",
            instances_source="test.jsonl",
        )
    assert exc.value.path == "p.jsonl" and exc.value.record == "line 2" and exc.value.field == "id"
    assert "'other' matches no instance in test.jsonl" in str(exc.value)


def test_prediction_without_id_is_an_error_not_a_key_error():
    p = pred("i0")
    del p["id"]
    with pytest.raises(DataError) as exc:
        check_predictions([make_instance("i0")], [p], "p.jsonl")
    assert (exc.value.record, exc.value.field) == ("line 1", "id") and "missing" in str(exc.value)


@pytest.mark.parametrize("bad", [["i0"], 7, None, ""])
def test_prediction_with_a_non_string_id_is_an_error_not_a_type_error(bad):
    with pytest.raises(DataError) as exc:
        check_predictions([make_instance("i0")], [pred(bad)], "p.jsonl")
    assert exc.value.field == "id" and "non-empty string" in str(exc.value)


def test_no_predictions_at_all_scores_every_instance_incorrect_and_invalid():
    gold = [make_instance("i0"), make_instance("i1")]
    s = score(gold, [], LABELS, MECHS)["intent"]
    assert (s["label"], s["holis"], s["invalid_rate"], s["faith"], s["n"]) == (0.0, 0.0, 100.0, None, 2)


# ---- media that failed at evaluation time: kept in N, scored invalid, counted -----------------
def test_media_errors_stay_in_n_scored_invalid_and_are_counted_per_scenario():
    gold = [
        make_instance("i0"),
        make_instance("i1", media_error="clip.mp4: truncated"),
        make_instance("i2"),
        make_instance("s0", scenario="stance"),
    ]
    media_pred = {
        "id": "i2",
        "subject": None,
        "target": None,
        "mechanism": None,
        "label": None,
        "media_error": "image file not found: x.png",
    }  # marked by the method, not the media stage
    out = score(
        gold,
        [pred("i0"), media_pred],
        {**LABELS, "stance": ["dismissive"]},
        {**MECHS, "stance": ["dominant detachment"]},
    )
    assert (out["intent"]["n"], out["intent"]["media_errors"], out["intent"]["invalid_rate"]) == (3, 2, 66.67)
    assert out["intent"]["holis"] == 33.33 and out["stance"]["media_errors"] == 0


def test_a_prediction_without_media_error_on_an_unmarked_instance_counts_none():
    assert (
        score([make_instance("i0")], [pred("i0") | {"media_error": None}], LABELS, MECHS)["intent"]["media_errors"] == 0
    )


# ---- bad input: score files ------------------------------------------------------------------


def good_scores():
    gold = [make_instance("i0"), make_instance("i1")]
    return score(gold, [pred("i0"), pred("i1", label="provoke")], LABELS, MECHS)


def test_what_score_writes_passes_the_score_file_check():
    sc = good_scores()
    assert parse_scores(json.dumps(sc).encode(), "s.json") == sc
    assert check_scores(score([make_instance("i0")], [], LABELS, MECHS), "s.json")  # faith and c_sem_dyad null


@pytest.mark.parametrize(
    "mutate, record, field, words",
    [
        (lambda sc: sc.update(intent=5), "scenario 'intent'", None, "must be an object of metrics"),
        (lambda sc: sc["intent"].update(dyad="high"), "scenario 'intent'", "dyad", "percentage"),
        (lambda sc: sc["intent"].pop("holis"), "scenario 'intent'", "holis", "missing"),
        (lambda sc: sc["intent"].update(holis=None), "scenario 'intent'", "holis", "percentage"),
        (lambda sc: sc["intent"].update(label=140.0), "scenario 'intent'", "label", "[0, 100]"),
        (lambda sc: sc["intent"].update(label=True), "scenario 'intent'", "label", "percentage"),
        (lambda sc: sc["intent"].update(n=0), "scenario 'intent'", "n", "positive integer"),
        (lambda sc: sc["intent"].update(n="24"), "scenario 'intent'", "n", "positive integer"),
        (lambda sc: sc["intent"].update(hols=1.0), "scenario 'intent'", "hols", "unknown metric"),
        (lambda sc: sc["intent"].pop("media_errors"), "scenario 'intent'", "media_errors", "missing"),
        (lambda sc: sc["intent"].update(media_errors=3), "scenario 'intent'", "media_errors", "from 0 to n (2)"),
        (lambda sc: sc["intent"].update(media_errors=-1), "scenario 'intent'", "media_errors", "from 0 to n"),
        (lambda sc: sc["intent"].update(media_errors=1.0), "scenario 'intent'", "media_errors", "an integer"),
    ],
)
def test_bad_score_content_names_the_scenario_and_field(mutate, record, field, words):
    sc = good_scores()
    mutate(sc)
    with pytest.raises(DataError) as exc:
        check_scores(sc, "s.json")
    assert (exc.value.path, exc.value.record, exc.value.field) == ("s.json", record, field)
    assert words in str(exc.value)


def test_empty_score_object_is_an_error():
    with pytest.raises(DataError, match="no scenarios"):
        parse_scores(b"{}", "s.json")


def test_score_file_that_is_not_an_object_is_an_error():
    with pytest.raises(DataError, match="must be a JSON object"):
        parse_scores(b"[1, 2]", "s.json")


def test_truncated_score_file_is_an_error_naming_it():
    with pytest.raises(DataError, match=r"^s\.json: not valid JSON.*truncated"):
        parse_scores(json.dumps(good_scores()).encode()[:40], "s.json")


def test_score_file_that_is_not_utf8_is_an_error_naming_it():
    with pytest.raises(DataError, match=r"^s\.json: not UTF-8"):
        parse_scores(b'{"intent": "\xff"}', "s.json")


def test_one_finite_number_check_serves_scores_stats_and_frame_timestamps():
    from socialbench.moca.eval.scoring import is_number
    from socialbench.moca.schema import instances as schema

    assert [is_number(v) for v in (0, 2.5, -1, True, float("nan"), float("inf"), "1", None)] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    assert schema.is_number is is_number
    assert schema.frames_problem([{"path": "f.png", "sha256": "ab" * 32, "timestamp": float("nan")}]) is not None


def test_a_record_whose_error_is_set_is_invalid_even_with_fields_that_match():
    # issue 12: a failed call's record must not score as a clean answer
    gold = [make_instance("i0")]
    s = score(gold, [{**pred("i0"), "error": "HTTP 500 (gave up after 6 attempts)"}], LABELS, MECHS)["intent"]
    assert (s["label"], s["holis"], s["invalid_rate"]) == (0.0, 0.0, 100.0)


@pytest.mark.parametrize("bad", ["", 0, False, ["x"]])
def test_an_error_that_is_not_null_or_a_message_is_refused(bad):
    with pytest.raises(DataError) as exc:
        check_predictions([make_instance("i0")], [{**pred("i0"), "error": bad}], source="p.jsonl")
    assert (exc.value.record, exc.value.field) == ("line 1", "error")
