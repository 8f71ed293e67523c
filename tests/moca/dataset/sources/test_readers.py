"""Parsing raw files so that bad input names the file, the record and the field."""

import csv

import pytest

from socialbench.core.errors import ConfigError, DataError
from socialbench.moca.dataset.sources.readers import check_encoding, decode, json_records, jsonl_records, table_rows


def test_json_object_records_come_with_their_keys():
    assert list(json_records('{"a": 1, "b": {"x": [2]}}', "f.json", "object")) == [("a", 1), ("b", {"x": [2]})]


def test_json_array_records_come_with_their_positions():
    assert list(json_records("[ {}, [1] ,3 ]", "f.json", "array")) == [(0, {}), (1, [1]), (2, 3)]


def test_an_empty_json_array_has_no_records():
    assert list(json_records("[]\n", "f.json", "array")) == []


def test_truncated_json_names_the_file_the_cut_record_and_the_last_complete_one():
    text = '{"1_60": {"utterance": "a"}, "1_70": {"utterance": "b", "spea'
    with pytest.raises(DataError) as err:
        list(json_records(text, "sarcasm_data.json", "object"))
    msg = str(err.value)
    assert msg.startswith("sarcasm_data.json, record 2, after record '1_60': invalid JSON at line 1 column")
    assert "truncated?" in msg


def test_truncated_json_array_names_the_position_of_the_cut_record():
    with pytest.raises(DataError, match=r"valid.json, record 3, after record 2: invalid JSON at line 3"):
        list(json_records('[{"a": 1},\n{"a": 2},\n{"a": ', "valid.json", "array"))


def test_an_unclosed_array_is_reported_as_truncated():
    with pytest.raises(DataError, match=r"record 2, after record 1: .*the array is not closed"):
        list(json_records('[{"a": 1}', "f.json", "array"))


def test_a_json_document_of_the_wrong_kind_is_named():
    with pytest.raises(DataError, match=r"f.json: expected a JSON object \(starting with '\{'\), got '\['"):
        list(json_records("[1]", "f.json", "object"))


def test_jsonl_names_the_broken_line():
    with pytest.raises(DataError, match=r"train.jsonl, record line 2: invalid JSON at column"):
        list(jsonl_records('{"id": 1}\n{"id": 2, "te\n', "train.jsonl"))


def test_bytes_that_are_not_utf8_name_the_line_and_offset():
    data = b"line one\nmaybe caf" + b"\xe9\n"
    with pytest.raises(DataError) as err:
        decode(data, "captions.csv")
    assert str(err.value).startswith("captions.csv, record line 2: not utf-8 text: byte 0xe9 at offset 18 (column 10)")
    assert "set `encoding`" in str(err.value)


def test_a_declared_encoding_decodes_the_same_bytes():
    assert decode("café".encode("cp1252"), "f.csv", "cp1252") == "café"


def test_a_utf8_byte_order_mark_is_dropped():
    assert decode(b"\xef\xbb\xbfid,text\n", "f.csv") == "id,text\n"


def test_an_unknown_encoding_name_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match="unknown text encoding 'utf-9'"):
        check_encoding("utf-9")


def test_missing_columns_name_the_header_and_the_first_missing_column():
    with pytest.raises(DataError) as err:
        table_rows(
            "season\tepisode\ttext\nS01\tE01\thi\n", "train.tsv", ("season", "episode", "clip", "text", "label"), "\t"
        )
    msg = str(err.value)
    assert msg.startswith("train.tsv, record line 1 (header), field 'clip': missing column(s) 'clip', 'label'")


def test_a_row_with_too_many_fields_names_its_line():
    with pytest.raises(DataError, match=r"train.tsv, record line 3: expected 2 fields \('\\t'-separated\), got 3"):
        table_rows("a\tb\n1\t2\n1\t2\t3\n", "train.tsv", ("a", "b"), "\t", csv.QUOTE_NONE)


def test_table_rows_keep_their_line_numbers_past_blank_lines():
    _, rows = table_rows("id,text\n1,x\n\n2,y\n", "f.csv", ("id", "text"))
    assert rows == [(2, {"id": "1", "text": "x"}), (4, {"id": "2", "text": "y"})]
