"""Inspecting the request cache (core.cache_inspect): stored records checked as read, and the
differences between key parts that explain a miss."""

from __future__ import annotations

import pytest

from socialbench.core.cache_inspect import checked_entry, checked_model_row, diff_parts
from socialbench.core.errors import DataError

KEY = "0123456789abcdef" * 4


def test_diff_reports_added_and_removed_parts():
    changes = diff_parts({"a": [1, 2], "b": 1}, {"a": [1], "c": 2})
    assert [c.path for c in changes] == ["a[1]", "b", "c"]


def test_key_parts_that_are_not_json_name_the_entry_and_field():
    with pytest.raises(DataError) as exc:
        checked_entry("c.sqlite", (KEY, "m", "{not json", 1.0))
    assert str(exc.value).startswith("c.sqlite, record key 0123456789ab…, field 'key_parts': is not JSON")


def test_key_parts_that_are_json_but_no_object_are_refused():
    with pytest.raises(DataError, match="field 'key_parts': is JSON list, not an object"):
        checked_entry("c.sqlite", (KEY, "m", "[1, 2]", 1.0))


def test_a_blob_model_is_named_in_an_entry():
    with pytest.raises(DataError, match="field 'model': holds a BLOB where the request cache keeps text"):
        checked_entry("c.sqlite", (KEY, b"m", "{}", 1.0))


def test_a_model_total_that_is_not_a_number_names_the_model():
    row = ("m", "scripted", 1, "many", 0, 0.0, 0, 1.0, 1.0)
    with pytest.raises(DataError, match=r"c.sqlite, record model 'm': its input_tokens total is text"):
        checked_model_row("c.sqlite", row)


def test_a_good_entry_reads_back_with_its_key_parts_decoded():
    entry = checked_entry("c.sqlite", (KEY, "m", '{"task": {"a": 1}}', 2.5))
    assert entry == {"key": KEY, "model": "m", "key_parts": {"task": {"a": 1}}, "created_at": 2.5}
