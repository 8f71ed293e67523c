import json

import pytest

from socialbench.errors import DataError
from socialbench.moca.schema import load_instances

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
