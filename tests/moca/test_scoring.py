from socialbench.moca.scoring import normalize, percent, score

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
