"""The annotation round-trip (socialbench.meetingtom.dataset.annotation, paper 3.3 and B.3): sheets out and
back, majority vote with its discard reasons, the task3_2 rule, Fleiss' kappa against statsmodels and
a textbook example, the pandera gold schema, and the simulated annotators (a test double)."""

import csv
import io

import numpy as np
import pytest

from socialbench.core.errors import DataError
from socialbench.meetingtom.dataset import annotation as ann

T1 = [
    "active_engagement",
    "supportive_endorsement",
    "focused_listening",
    "cognitive_conflict",
    "confused_bewilderment",
    "hesitation",
    "disengaged_withdrawal",
]
T31 = ["no_consensus", "pseudo_consensus", "genuine_consensus"]  # shuffled: A no, B pseudo, C genuine


def item(iid, task, values, clip_id=None, source="demo", meta=None, media=None, question="Which one?"):
    """An item record as spec.md has it (no answer/gold). task3_2 values are participant letters."""
    options = [
        {"label": str(k + 1), "value": v, "text": f"Participant {v}" if task == "task3_2" else v.replace("_", " ")}
        for k, v in enumerate(values)
    ]
    if task == "task3_2":
        for o in options:
            o["participant"] = o["value"]
    return {
        "id": iid,
        "task": task,
        "source": source,
        "split": "test",
        "modality": "both",
        "clip_id": clip_id or iid,
        "question": question,
        "options": options,
        "transcript": "A: hello\nB: yes",
        "turns": [],
        "duration": 5.0,
        "media": media,
        "media_error": None,
        "meta": meta or {"meeting": "ES9000a"},
    }


def clip(n, source="demo", meta=None):
    """A consensus clip: its task3_1 item and its task3_2 item (label A is participant C, B is A, ...)."""
    return (
        item(f"{source}-c{n}-31", "task3_1", T31, clip_id=f"c{n}", source=source, meta=meta),
        item(f"{source}-c{n}-32", "task3_2", ["C", "A", "D", "B"], clip_id=f"c{n}", source=source, meta=meta),
    )


def by_id(items):
    return {it["id"]: it for it in items}


def sheet(rows, header=("item_id", "task", "answer")):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return out.getvalue()


# ---- sheets -------------------------------------------------------------------------------------------
def test_export_has_one_row_per_item_sorted_with_clip_paths_and_rendered_options():
    media = {"videos": {"mosaic": {"path": "clips/x/mosaic.mp4"}, "closeup_A": {"path": "clips/x/closeup_A.mp4"}}}
    items = [
        item("b", "task2_2", ["positive", "negative"], media=media, meta={"meeting": "ES9000a", "window": [1.5, 51.5]}),
        item("a", "task1", T1[:2]),
    ]
    rows = list(csv.DictReader(io.StringIO(ann.export_sheet(items))))
    assert tuple(rows[0]) == ann.SHEET_COLUMNS
    assert [r["item_id"] for r in rows] == ["a", "b"]
    assert rows[1]["clips"] == "clips/x/closeup_A.mp4;clips/x/mosaic.mp4" and rows[0]["clips"] == ""
    assert (rows[1]["meeting"], rows[1]["clip_start"], rows[1]["clip_end"]) == ("ES9000a", "1.500", "51.500")
    assert rows[0]["options"] == "1. active engagement | 2. supportive endorsement"
    assert rows[0]["answer"] == rows[0]["notes"] == ""


def test_awkward_question_text_round_trips_through_the_csv():
    awkward = 'He said "no, never",\nthen; left | A. fake option'
    it = item("x", "task2_2", ["positive", "negative"], question=awkward)
    text = ann.export_sheet([it])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["question"] == awkward
    assert ann.read_sheet(text, "s.csv", by_id([it])) == {"x": None}  # untouched: blank answer
    rows[0]["answer"] = "2"
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=ann.SHEET_COLUMNS)
    w.writeheader()
    w.writerows(rows)
    assert ann.read_sheet(out.getvalue(), "s.csv", by_id([it])) == {"x": "2"}


def test_task3_2_answers_are_sorted_label_sets_or_none():
    c31, c32 = clip(1)
    items = by_id([c31, c32, clip(2)[1]])
    got = ann.read_sheet(sheet([[c32["id"], "task3_2", " 4 ; 2"], ["demo-c2-32", "task3_2", "None"]]), "s.csv", items)
    assert got == {c32["id"]: ("2", "4"), "demo-c2-32": ()}


@pytest.mark.parametrize(
    "text,line,field,match",
    [
        (
            sheet([["i1", "task1", "1"]], header=("item_id", "task")),
            "line 1 (header)",
            "answer",
            r"missing column\(s\) 'answer'",
        ),
        (
            sheet([["i1", "task1", "1"], ["i2", "task1", ""], ["i1", "task1", "2"]]),
            "line 4",
            "item_id",
            "duplicate item id 'i1'",
        ),
        (sheet([["i1", "task1", "1"], ["nope", "task1", "1"]]), "line 3", "item_id", "unknown item id 'nope'"),
        (sheet([["i1", "task1", "Z"]]), "line 2", "answer", "not an option label"),
        (sheet([["i1", "task1", "1;2"]]), "line 2", "answer", "not an option label"),
        (sheet([["i1", "task2_2", "1"]]), "line 2", "task", "but item 'i1' is task1"),
        (sheet([["c", "task3_2", "1;1"]]), "line 2", "answer", "distinct option labels"),
        (sheet([["c", "task3_2", "1;5"]]), "line 2", "answer", "5 is not an option label"),
    ],
)
def test_a_bad_sheet_names_file_row_and_column(text, line, field, match):
    items = by_id([item("i1", "task1", T1[:3]), item("i2", "task1", T1[:3]), item("c", "task3_2", list("ABCD"))])
    with pytest.raises(DataError, match=match) as err:
        ann.read_sheet(text, "ann1.csv", items)
    assert str(err.value).startswith(f"ann1.csv, record {line}, field {field!r}:")


def test_a_spreadsheets_byte_order_mark_is_ignored():
    items = by_id([item("i1", "task1", T1[:3])])
    assert ann.read_sheet("\ufeff" + sheet([["i1", "task1", "3"]]), "s.csv", items) == {"i1": "3"}


def test_the_row_number_is_where_a_multi_line_row_starts():
    items = by_id([item("i1", "task1", T1[:3]), item("i2", "task1", T1[:3])])
    text = sheet(
        [["i1", "task1", "1", "two\nlines"], ["i2", "task1", "Q", ""]], header=("item_id", "task", "answer", "notes")
    )
    with pytest.raises(DataError, match="record line 4"):
        ann.read_sheet(text, "s.csv", items)


# ---- majority vote -----------------------------------------------------------------------------------------
def vote(a1, a2, adj, task="task1", values=T1[:3]):
    it = item("i", task, values)
    return ann.adjudicate([it], {"i": a1}, {"i": a2}, {"i": adj} if adj is not None else {})


def test_agreeing_annotators_give_a_unanimous_gold_with_its_value():
    gold, dropped = vote("2", "2", None)
    assert dropped == []
    assert gold == [
        {
            "item_id": "i",
            "task": "task1",
            "source": "demo",
            "label": "2",
            "value": "supportive_endorsement",
            "agreement": "unanimous",
            "votes": 2,
            "adjudicated": False,
        }
    ]
    assert vote("2", "2", "2")[0][0]["votes"] == 3


def test_an_adjudicator_disagreeing_with_agreeing_annotators_makes_it_a_majority():
    (g,), _ = vote("2", "2", "3")
    assert (g["label"], g["agreement"], g["votes"], g["adjudicated"]) == ("2", "majority", 2, False)


def test_a_disagreement_is_settled_two_of_three_by_the_adjudicator():
    (g,), _ = vote("1", "3", "3")
    assert (g["label"], g["value"], g["agreement"], g["votes"], g["adjudicated"]) == (
        "3",
        "focused_listening",
        "majority",
        2,
        True,
    )


def test_three_different_labels_are_discarded_as_no_majority():
    gold, (d,) = vote("1", "2", "3")
    assert gold == [] and d["reason"] == "no_majority"
    assert d["labels"] == {"annotator_1": "1", "annotator_2": "2", "adjudicator": "3"}


def test_a_disagreement_the_adjudicator_left_blank_is_discarded_as_not_adjudicated():
    gold, (d,) = vote("1", "2", None)
    assert gold == [] and (d["reason"], d["labels"]["adjudicator"]) == ("not_adjudicated", None)


def test_an_item_a_primary_annotator_left_blank_is_discarded_as_not_labelled():
    gold, (d,) = vote(None, "2", "2")
    assert gold == [] and d["reason"] == "not_labelled" and "annotator_1" in d["detail"]


def consensus(g31, a32, b32, adj32=None, n=1):
    c31, c32 = clip(n)
    return ann.adjudicate(
        [c32, c31],
        {c31["id"]: g31, c32["id"]: a32},
        {c31["id"]: g31, c32["id"]: b32},
        {c32["id"]: adj32} if adj32 is not None else {},
    )


def test_task3_2_labels_compare_as_sets_and_gold_values_are_participant_letters():
    gold, dropped = consensus("2", ("1", "3"), ("3", "1"))  # 3.1 gold 2 = pseudo_consensus
    g32 = next(g for g in gold if g["task"] == "task3_2")
    assert dropped == [] and (g32["label"], g32["value"], g32["agreement"]) == ("1;3", "C;D", "unanimous")


def test_task3_2_is_not_applicable_unless_its_clips_task3_1_gold_is_pseudo_consensus():
    gold, (d,) = consensus("3", ("1",), ("1",))  # 3 = genuine_consensus
    assert [g["task"] for g in gold] == ["task3_1"]
    assert (d["task"], d["reason"]) == ("task3_2", "not_applicable") and "genuine_consensus" in d["detail"]


def test_task3_2_is_not_applicable_when_its_task3_1_item_was_discarded():
    c31, c32 = clip(1)
    gold, dropped = ann.adjudicate(
        [c31, c32], {c31["id"]: "1", c32["id"]: ("1",)}, {c31["id"]: "2", c32["id"]: ("1",)}, {}
    )
    assert gold == [] and [(d["task"], d["reason"]) for d in dropped] == [
        ("task3_1", "not_adjudicated"),
        ("task3_2", "not_applicable"),
    ]


def test_task3_2_with_a_majority_for_nobody_is_discarded_as_no_dissenter():
    gold, (d,) = consensus("2", (), (), None)
    assert d["reason"] == "no_dissenter" and d["labels"]["annotator_1"] == "none"


def test_task3_2_pairs_with_the_task3_1_item_of_the_same_source():
    demo31, demo32 = clip(1, source="demo")
    ami31, _ = clip(1, source="ami")
    a = {demo31["id"]: "3", ami31["id"]: "2", demo32["id"]: ("1",)}  # demo clip genuine, the ami clip c1 pseudo
    _, dropped = ann.adjudicate([demo31, ami31, demo32], a, a, {})
    assert [(d["item_id"], d["reason"]) for d in dropped] == [(demo32["id"], "not_applicable")]


# ---- Fleiss' kappa ---------------------------------------------------------------------------------------------
WIKIPEDIA = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_of_the_textbook_example_is_0_210():
    # Wikipedia "Fleiss' kappa" worked example: P-bar = 0.378, P_e = 0.2128, kappa = 0.210.
    assert ann.fleiss_kappa(WIKIPEDIA) == pytest.approx(0.20993, abs=5e-5)


@pytest.mark.parametrize("seed", range(6))
def test_fleiss_kappa_equals_statsmodels_on_random_tables(seed):
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_kappa

    rng = np.random.default_rng(seed)
    items, cats, raters = int(rng.integers(2, 40)), int(rng.integers(2, 8)), int(rng.integers(2, 9))
    table = np.stack([np.bincount(rng.integers(0, cats, raters), minlength=cats) for _ in range(items)])
    assert ann.fleiss_kappa(table) == pytest.approx(sm_kappa(table, method="fleiss"), abs=1e-12)


def test_fleiss_kappa_refuses_rows_with_different_rater_counts():
    with pytest.raises(ValueError, match="same number of raters"):
        ann.fleiss_kappa([[2, 1], [1, 1]])


def test_agreement_uses_only_the_items_all_three_labelled():
    items = [item(f"i{k}", "task1", T1[:3]) for k in range(4)]
    a1 = {"i0": "1", "i1": "2", "i2": "1", "i3": "3"}
    a2 = {"i0": "1", "i1": "2", "i2": "2", "i3": "1"}
    adj = {"i0": "1", "i1": "3", "i2": "2"}  # i3 left blank: not in the subset
    got = ann.agreement(items, a1, a2, adj)["task1"]
    table = [[3, 0, 0], [0, 2, 1], [1, 2, 0]]  # i0..i2 over A, B, C (values in option order)
    assert (got["n_items"], got["raters"]) == (3, 3)
    assert got["categories"] == sorted(T1[:3])
    assert got["kappa"] == pytest.approx(ann.fleiss_kappa(table))


def test_agreement_with_a_subset_ignores_other_items_and_lists_its_unlabelled_ones():
    items = [item(f"i{k}", "task1", T1[:3]) for k in range(4)]
    full = {"i0": "1", "i1": "2", "i2": "1", "i3": "3"}
    adj = {"i0": "1", "i1": "2", "i3": "2"}  # i3 was labelled for a disagreement, not for the subset
    got = ann.agreement(items, full, full, adj, subset=["i0", "i1", "i2"])["task1"]
    assert (got["n_items"], got["missing"], got["subset"]) == (2, ["i2"], "agreement subset")
    assert got["kappa"] == pytest.approx(ann.fleiss_kappa([[3, 0], [0, 3]]))


def test_the_agreement_subset_is_a_seeded_fixed_number_of_each_tasks_items_or_all_of_fewer():
    items = [item(f"a{k}", "task1", T1[:2]) for k in range(5)] + [
        item(f"b{k}", "task2_2", ["positive", "negative"]) for k in range(3)
    ]
    chosen = ann.agreement_subset(items, seed=1, size=4)
    assert (sum(i.startswith("a") for i in chosen), sum(i.startswith("b") for i in chosen)) == (4, 3)
    assert chosen == sorted(chosen) == ann.agreement_subset(list(reversed(items)), seed=1, size=4)


def test_agreement_is_on_values_not_shuffled_letters():
    items = [item("i0", "task1", T1[:2]), item("i1", "task1", list(reversed(T1[:2])))]
    # Everybody says active_engagement: letter A on i0, letter B on i1. One category: undefined.
    got = ann.agreement(items, {"i0": "1", "i1": "2"}, {"i0": "1", "i1": "2"}, {"i0": "1", "i1": "2"})["task1"]
    assert got["kappa"] is None and "active_engagement" in got["note"]


def test_agreement_is_undefined_with_fewer_than_two_items():
    got = ann.agreement([item("i0", "task1", T1[:2])], {"i0": "1"}, {"i0": "2"}, {"i0": "1"})["task1"]
    assert got["kappa"] is None and got["n_items"] == 1 and "fewer than 2" in got["note"]


def test_task3_2_agreement_categories_are_participant_sets():
    (_, c1), (_, c2) = clip(1), clip(2)
    a = {c1["id"]: ("1", "3"), c2["id"]: ()}
    b = {c1["id"]: ("1",), c2["id"]: ()}
    got = ann.agreement([c1, c2], a, b, a)["task3_2"]
    assert got["categories"] == ["C", "C;D", "none"]
    assert got["kappa"] == pytest.approx(ann.fleiss_kappa([[1, 2, 0], [0, 0, 3]]))


# ---- gold schema ---------------------------------------------------------------------------------------------
def good_gold():
    gold, _ = consensus("2", ("1", "3"), ("1", "3"), ("1",))
    return gold + vote("1", "3", "3")[0]


def test_the_schema_accepts_the_gold_adjudicate_makes():
    gold = good_gold()
    assert {g["task"] for g in gold} == {"task1", "task3_1", "task3_2"}
    ann.validate_gold(gold, "gold.jsonl")
    import pandas as pd

    ann.GOLD_SCHEMA.validate(pd.DataFrame(gold))


@pytest.mark.parametrize(
    "change,record,field,match",
    [
        (lambda g: g.append(dict(g[0])), "demo-c1-31 (#4)", "item_id", "duplicate item id"),
        (lambda g: g[2].update(votes=1), "i", "votes", "in_range"),
        (lambda g: g[2].update(agreement="maybe"), "i", "agreement", "isin"),
        (lambda g: g[1].update(label="3;1"), "demo-c1-32", "label", "sorted distinct option labels"),
        (lambda g: g[2].update(label=""), "i", "label", "str_length"),
        (lambda g: g[2].update(votes="2"), "i", "votes", "not int"),
        (lambda g: g[2].pop("adjudicated"), "i", "adjudicated", "missing field"),
        (lambda g: g[2].update(agreement="unanimous"), "i", "agreement", "'unanimous' is not adjudicated"),
        (lambda g: g[1].update(value="D;C"), "demo-c1-32", "value", "sorted distinct participant letters"),
    ],
)
def test_validate_gold_names_the_record_and_column_of_bad_gold(change, record, field, match):
    gold = good_gold()
    change(gold)
    with pytest.raises(DataError, match=match) as err:
        ann.validate_gold(gold, "gold.jsonl")
    assert str(err.value).startswith(f"gold.jsonl, record {record}, field {field!r}:")
    assert "\n" not in str(err.value)


# ---- gold into instances --------------------------------------------------------------------------------------
def test_apply_gold_adds_answer_and_gold_to_copies_of_the_kept_items():
    c31, c32 = clip(1)
    lone = item("i", "task1", T1[:3])
    gold = good_gold()
    out = ann.apply_gold([c31, c32, lone], gold)
    assert [(o["id"], o["answer"], o["gold"]) for o in out] == [
        (c31["id"], "2", "pseudo_consensus"),
        (c32["id"], ["1", "3"], ["C", "D"]),
        ("i", "3", "focused_listening"),
    ]
    assert "answer" not in c31 and out[0]["options"] is not c31["options"]


def test_apply_gold_refuses_a_value_that_is_not_what_the_label_means():
    gold = vote("1", "1", None)[0]
    gold[0]["value"] = "hesitation"
    with pytest.raises(DataError, match="field 'value'"):
        ann.apply_gold([item("i", "task1", T1[:3])], gold, "gold.jsonl")


# ---- simulated annotators (test double) --------------------------------------------------------------------------
def state_item(iid, **meta):
    return item(iid, "task1", list(reversed(T1)), meta={"meeting": "m", "target": "B", **meta})


@pytest.mark.parametrize(
    "meta,value",
    [
        ({"role": "speaker", "act_type": "sug"}, "active_engagement"),
        ({"role": "speaker", "act_type": "ass"}, "supportive_endorsement"),
        ({"role": "speaker", "act_type": "el.inf"}, "confused_bewilderment"),
        ({"role": "speaker", "act_type": "stl"}, "hesitation"),
        (
            {"role": "listener", "act_type": "bck", "basis": "backchannel", "speech_s": {"B": 0.4}},
            "supportive_endorsement",
        ),
        ({"role": "listener", "basis": "act", "addressed": True, "speech_s": {}}, "focused_listening"),
        ({"role": "listener", "basis": "act", "addressed": False, "speech_s": {"B": 0.0}}, "disengaged_withdrawal"),
    ],
)
def test_the_proxy_labels_task1_from_role_and_act(meta, value):
    it = state_item("s", **meta)
    label = ann.proxy_label(it)
    assert next(o["value"] for o in it["options"] if o["label"] == label) == value


@pytest.mark.parametrize(
    "agreeing,state,dissenters",
    [
        ([], "no_consensus", "none"),
        (["B", "C", "D"], "genuine_consensus", "none"),
        (["B"], "pseudo_consensus", "1;3"),
    ],
)
def test_the_proxy_labels_consensus_and_dissenters_from_who_agrees(agreeing, state, dissenters):
    meta = {
        "meeting": "m",
        "participants": ["A", "B", "C", "D"],
        "proposers": ["A"],
        "agreeing": agreeing,
        "responses": [],
    }
    c31, c32 = clip(1, meta=meta)  # task3_2 labels: A=C, B=A, C=D, D=B; proposer A -> dissenters C, D = labels A, C
    assert T31["123".index(ann.proxy_label(c31))] == state
    assert ann.proxy_label(c32) == dissenters


def test_the_proxy_labels_task2_2_from_the_reply_pair():
    it = item(
        "r",
        "task2_2",
        ["neutral", "negative", "positive", "uncertain"],
        meta={"meeting": "m", "reply": {"act": "x", "pair_type": "NEG"}},
    )
    assert ann.proxy_label(it) == "2"
    it["meta"]["reply"] = None
    assert ann.proxy_label(it) == "1"


def test_the_proxy_names_the_item_whose_meta_it_cannot_read():
    with pytest.raises(DataError, match="items.jsonl, record s, field 'meta.role'"):
        ann.proxy_label(item("s", "task1", T1, meta={"meeting": "m", "target": "B"}), "items.jsonl")


def demo_items(n=12):
    out = []
    for k in range(n):
        out.append(
            state_item(
                f"s{k:02d}",
                role="speaker" if k % 2 else "listener",
                act_type="sug",
                basis="act",
                addressed=k % 3 == 0,
                speech_s={"B": 0.0},
            )
        )
        meta = {
            "meeting": "m",
            "participants": list("ABCD"),
            "proposers": ["A"],
            "agreeing": [[], ["B"], ["B", "C", "D"]][k % 3],
            "responses": [],
        }
        out.extend(clip(k, meta=meta))
    return out


def test_simulated_sheets_are_deterministic_and_depend_on_the_seed():
    items = demo_items()
    assert ann.simulate_sheets(items, seed=3) == ann.simulate_sheets(list(reversed(items)), seed=3)
    assert ann.simulate_sheets(items, seed=3) != ann.simulate_sheets(items, seed=4)


def test_simulated_sheets_are_the_same_bytes_in_another_process():
    # String hashing differs between processes; nothing the sheets hold may depend on it.
    import hashlib
    import os
    import subprocess
    import sys

    code = (
        "import hashlib, sys; sys.path.insert(0, '.'); from tests.meetingtom.dataset.test_annotation import demo_items;"
        "from socialbench.meetingtom.dataset.annotation import simulate_sheets;"
        "print(hashlib.sha256(''.join(simulate_sheets(demo_items(), seed=5)).encode()).hexdigest())"
    )
    here = hashlib.sha256("".join(ann.simulate_sheets(demo_items(), seed=5)).encode()).hexdigest()
    for hash_seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))),
        )
        assert out.stdout.strip() == here


def test_an_items_simulated_labels_do_not_depend_on_the_other_items():
    items = demo_items()
    one = by_id(items)["s05"]
    a1_all = ann.read_sheet(ann.simulate_sheets(items, seed=3)[0], "a1", by_id(items))
    a1_one = ann.read_sheet(ann.simulate_sheets([one], seed=3)[0], "a1", by_id([one]))
    assert a1_all["s05"] == a1_one["s05"]


def test_simulated_sheets_say_they_are_a_test_double_and_round_trip_to_gold():
    items = demo_items()
    s1, s2, s3 = ann.simulate_sheets(items, seed=11, accuracy=0.8, agreement_items=6)
    assert all(r["notes"] == ann.SIMULATED_NOTE for r in csv.DictReader(io.StringIO(s1)))
    idx = by_id(items)
    a1, a2, adj = (ann.read_sheet(s, name, idx) for s, name in ((s1, "a1"), (s2, "a2"), (s3, "adj")))
    # The adjudicator labels every disagreement and the agreement subset, nothing else.
    subset = set(ann.agreement_subset(items, seed=11, size=6))
    assert {i for i in idx if adj[i] is not None} == subset | {i for i in idx if a1[i] != a2[i]}
    gold, dropped = ann.adjudicate(items, a1, a2, adj)
    ann.validate_gold(gold, "gold")
    assert len(gold) + len(dropped) == len(items)
    assert {d["reason"] for d in dropped} <= {"no_majority", "not_applicable", "no_dissenter"}
    assert ann.agreement(items, a1, a2, adj, subset=subset)["task1"]["n_items"] == 6
    instances = ann.apply_gold(items, gold)
    assert len(instances) == len(gold) and all("answer" in i and "gold" in i for i in instances)


def test_the_simulated_human_gives_the_gold_at_its_rate_and_is_seeded_per_instance():
    from socialbench.meetingtom.dataset.annotation import SIMULATED_HUMAN_NOTE, simulate_human

    insts = [
        {
            "id": f"i{k}",
            "task": "task2_2",
            "answer": "2",
            "options": [{"label": x, "value": x.lower(), "text": x} for x in "ABCD"],
        }
        for k in range(200)
    ]
    answers = simulate_human(insts, seed=3, accuracy=0.8)
    right = sum(a["answer"] == "2" for a in answers)
    assert 140 <= right <= 180 and all(a["note"] == SIMULATED_HUMAN_NOTE for a in answers)
    by_id = {a["id"]: a for a in answers}
    assert all(
        by_id[a["id"]] == a for a in simulate_human(insts[:5], seed=3, accuracy=0.8)
    )  # never depends on the other instances
    assert all(a["answer"] == "2" for a in simulate_human(insts, seed=3, accuracy=1.0))


def test_the_simulated_human_answers_task32_with_a_list_of_letters():
    from socialbench.meetingtom.dataset.annotation import simulate_human

    inst = {
        "id": "x",
        "task": "task3_2",
        "answer": ["1", "3"],
        "options": [{"label": x, "value": x, "participant": x, "text": x} for x in "ABCD"],
    }
    assert simulate_human([inst], seed=1, accuracy=1.0)[0]["answer"] == ["1", "3"]
