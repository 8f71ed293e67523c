"""MeetingToM's instance and item records (src/socialbench/meetingtom/schema/instances.py): each subtask's
record checked field by field, a bad one named by file, record (or line) and field; a file of them
loaded with its ids unique, items only in item mode. The records are built as
tests/meetingtom/dataset/test_instances.py builds them."""

import pytest

from socialbench.core.errors import DataError
from socialbench.core.io import write_jsonl
from socialbench.meetingtom.dataset.instances import item_task1, item_task22, items_task3
from socialbench.meetingtom.schema.instances import check_instance, load_instances
from tests.meetingtom.dataset.test_instances import CAND, CONS, EVENT, KW, STATE, M, make, meeting_records, source


def labelled(item, values):
    """An item with the gold of an annotation round-trip (the labels of ``values``)."""
    labels = sorted(o["label"] for o in item["options"] if o["value"] in values)
    if item["task"] == "task3_2":
        return {**item, "answer": labels, "gold": sorted(values)}
    return {**item, "answer": labels[0], "gold": values[0]}


@pytest.mark.parametrize(
    "change,field",
    [
        ({"answer": "Z"}, "answer"),
        ({"task": "task9"}, "task"),
        ({"split": "train"}, "split"),
        ({"modality": "smell"}, "modality"),
        ({"you_time": "12"}, "you_time"),
        ({"options": [{"label": "A"}]}, "options"),
        ({"clip_id": 3}, "clip_id"),
    ],
)
def test_a_bad_instance_is_named_by_file_record_and_field(change, field):
    with pytest.raises(DataError) as err:
        check_instance({**make(), **change}, "t.jsonl")
    assert err.value.field == field and err.value.record == f"ami-task2_1-{M}.B.you.1" and err.value.path == "t.jsonl"


def test_an_answer_that_is_not_the_addressee_is_refused():
    inst = make()
    other = next(o for o in inst["options"] if o["participant"] != "D")
    with pytest.raises(DataError, match="not the addressee") as err:
        check_instance({**inst, "answer": other["label"], "gold": other["value"]}, "t.jsonl")
    assert err.value.field == "gold"


def test_an_answer_whose_option_is_not_the_gold_is_refused():
    inst = labelled(item_task1(meeting_records(), STATE, None, **KW), ["hesitation"])
    with pytest.raises(DataError, match="not the gold 'focused_listening'") as err:
        check_instance({**inst, "gold": "focused_listening"}, "t.jsonl")
    assert err.value.field == "answer" and err.value.record == inst["id"]


def test_every_annotated_task_validates_once_labelled():
    m = meeting_records()
    t31, t32 = items_task3(m, CONS, "ABCD", None, **KW)
    for inst in (
        labelled(item_task1(m, STATE, None, **KW), ["hesitation"]),
        labelled(item_task22(m, CAND, EVENT, None, **KW), ["positive"]),
        labelled(t31, ["pseudo_consensus"]),
        labelled(t32, ["C", "A"]),
    ):
        check_instance(inst, "t.jsonl")


@pytest.mark.parametrize(
    "answer",
    [
        "A",  # one label, not a list
        [],  # nobody
        ["B", "A"],  # not sorted
        ["A", "A"],  # not distinct
        ["A", "Z"],  # not an option
    ],
)
def test_a_task32_answer_must_be_a_sorted_list_of_distinct_labels(answer):
    inst = labelled(items_task3(meeting_records(), CONS, "ABCD", None, **KW)[1], ["A", "C"])
    with pytest.raises(DataError, match="sorted non-empty list") as err:
        check_instance({**inst, "answer": answer}, "t.jsonl")
    assert err.value.field == "answer" and err.value.record == inst["id"]


@pytest.mark.parametrize("answer", [[["A"]], [1, "A"]])
def test_a_task32_answer_of_non_strings_is_a_data_error(answer):
    inst = labelled(items_task3(meeting_records(), CONS, "ABCD", None, **KW)[1], ["A", "C"])
    with pytest.raises(DataError) as err:
        check_instance({**inst, "answer": answer}, "t.jsonl")
    assert err.value.field == "answer"


def test_a_task32_gold_must_be_the_sorted_participants_of_its_answer():
    inst = labelled(items_task3(meeting_records(), CONS, "ABCD", None, **KW)[1], ["A", "C"])
    for gold in (["C", "A"], ["A", "D"], "A;C"):
        with pytest.raises(DataError, match="not the gold") as err:
            check_instance({**inst, "gold": gold}, "t.jsonl")
        assert err.value.field == "answer"


def test_an_instance_without_gold_is_refused_outside_item_mode():
    with pytest.raises(DataError, match="field 'answer': missing"):
        check_instance(item_task1(meeting_records(), STATE, None, **KW), "t.jsonl")


def test_item_mode_refuses_a_task21_record():
    with pytest.raises(DataError, match="unknown task 'task2_1'") as err:
        check_instance(make(), "items.jsonl", 4, item=True)
    assert err.value.field == "task" and err.value.record == f"ami-task2_1-{M}.B.you.1"


def test_a_task32_option_without_its_participant_is_refused():
    item = items_task3(meeting_records(), CONS, "ABCD", None, **KW)[1]
    opts = [{k: v for k, v in o.items() if k != "participant"} for o in item["options"]]
    with pytest.raises(DataError, match="participant") as err:
        check_instance({**item, "options": opts}, "items.jsonl", item=True)
    assert err.value.field == "options"


def test_a_record_without_an_id_is_named_by_its_line():
    inst = make()
    del inst["id"]
    with pytest.raises(DataError, match="record line 12, field 'id': missing"):
        check_instance(inst, "t.jsonl", 12)


def test_a_missing_field_is_named():
    inst = make()
    del inst["transcript"]
    with pytest.raises(DataError, match="field 'transcript': missing"):
        check_instance(inst, "t.jsonl")


def test_duplicate_ids_in_a_file_are_an_error(tmp_path):
    write_jsonl(tmp_path / "i.jsonl", [make(), make()])
    with pytest.raises(DataError, match="duplicate id"):
        load_instances(tmp_path / "i.jsonl")


def test_items_load_in_item_mode_and_are_refused_as_instances(tmp_path):
    _, items, _ = source([meeting_records(candidates=[CAND, STATE, CONS])])
    write_jsonl(tmp_path / "items.jsonl", items)
    assert [i["id"] for i in load_instances(tmp_path / "items.jsonl", items=True)] == [i["id"] for i in items]
    with pytest.raises(DataError, match="field 'answer': missing"):
        load_instances(tmp_path / "items.jsonl")


def test_an_item_that_already_has_an_answer_is_refused():
    item = items_task3(meeting_records(), CONS, "ABCD", None, **KW)[0]
    with pytest.raises(DataError) as err:
        check_instance({**item, "answer": "A"}, "items.jsonl", item=True)
    assert err.value.field == "answer"
