"""JSON lines in: a file that cannot be read is one DataError naming it; bad lines name their line."""

import pytest

from socialbench.errors import DataError
from socialbench.io import read_jsonl, read_jsonl_lines


def test_non_utf8_file_names_the_byte_and_its_offset(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "caf\xe9"}\n')
    with pytest.raises(DataError) as exc:
        read_jsonl(path)
    assert str(exc.value) == f"{path}: not UTF-8 text (byte 0xe9 at offset 19)"


def test_folder_in_place_of_a_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="is a folder, not a file") as exc:
        read_jsonl(tmp_path)
    assert exc.value.path == str(tmp_path)


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        read_jsonl(tmp_path / "nope.jsonl")


def test_bad_json_line_is_named_by_its_line_number(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{oops\n')
    with pytest.raises(DataError) as exc:
        read_jsonl(path)
    assert exc.value.record == "line 3" and "not valid JSON" in str(exc.value)


def test_read_jsonl_lines_returns_bad_lines_with_their_problem_instead_of_raising(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{oops\n[1, 2]\n{"b": 2}\n')
    lines = read_jsonl_lines(path)
    assert [(jl.line, jl.record) for jl in lines] == [(1, {"a": 1}), (3, None), (4, None), (5, {"b": 2})]
    assert "line 3 is not valid JSON" in lines[1].problem and lines[1].raw == "{oops"
    assert lines[2].problem == "line 4 is not a JSON object"


def test_line_separator_characters_inside_strings_do_not_split_records(tmp_path):
    # Written with ensure_ascii=False these characters stay raw; str.splitlines() would split there.
    from socialbench.io import read_jsonl, write_jsonl

    records = [{"id": "a", "text": "one\u2028two\u2029three\x85four"}, {"id": "b", "text": "plain"}]
    write_jsonl(tmp_path / "r.jsonl", records)
    assert read_jsonl(tmp_path / "r.jsonl") == records
