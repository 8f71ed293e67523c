"""socialbench.core.sheets: the one CSV reader every annotation import uses (issue 20, point 6)."""

import os

import pytest

from socialbench.core.errors import DataError
from socialbench.core.sheets import csv_rows, distinct_sheets, rows_match


def test_rows_carry_the_line_where_they_start_in_the_file():
    text = 'item_id,notes\na,"two\nlines"\n\nb,x\n'
    _, rows = csv_rows(text, "s.csv", ("item_id",))
    assert [(line, row["item_id"]) for line, row in rows] == [(2, "a"), (5, "b")]


def test_a_column_named_twice_is_refused_naming_it():
    with pytest.raises(DataError, match=r"^s.csv, record line 1 \(header\), field 'answer': the column 'answer' is"):
        csv_rows("item_id,answer,answer\na,B,C\n", "s.csv", ("item_id",))


def test_a_row_wider_than_the_header_names_its_line():
    with pytest.raises(DataError, match=r"record line 3: expected 2 fields"):
        csv_rows("item_id,answer\na,B\nb,C,D\n", "s.csv", exact=False)


def test_a_shorter_row_is_padded_when_widths_need_not_be_exact():
    _, rows = csv_rows("item_id,answer,notes\na,B\n", "s.csv", exact=False)
    assert rows == [(2, {"item_id": "a", "answer": "B", "notes": ""})]


def test_the_same_file_in_two_roles_is_refused_by_path_and_by_hard_link(tmp_path):
    sheet = tmp_path / "a1.csv"
    sheet.write_text("item_id\n")
    with pytest.raises(DataError, match=r"--annotator is the same file as --annotator .*a1.csv: one sheet given twice"):
        distinct_sheets([("--annotator", sheet), ("--annotator", tmp_path / "." / "a1.csv")])
    os.link(sheet, tmp_path / "adj.csv")
    with pytest.raises(DataError, match="--adjudicator is the same file as --annotator"):
        distinct_sheets([("--annotator", sheet), ("--adjudicator", tmp_path / "adj.csv")])


def test_two_sheets_of_the_same_bytes_are_two_annotators_who_agree(tmp_path):
    for name in ("a1.csv", "a2.csv"):
        (tmp_path / name).write_text("item_id,answer\na,B\n")
    distinct_sheets([("--annotator", tmp_path / "a1.csv"), ("--annotator", tmp_path / "a2.csv")])


def test_a_row_of_another_item_names_its_line_and_a_missing_item_is_counted():
    with pytest.raises(DataError, match=r"record line 7, field 'item_id': 'z' is not one of the exported items"):
        rows_match("s.csv", {"a": 2, "z": 7}, ["a", "b"])
    with pytest.raises(DataError, match=r"no row for item 'b' \(2 of 3 items have none\)"):
        rows_match("s.csv", {"a": 2}, ["a", "b", "c"])
