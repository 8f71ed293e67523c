"""MoCA's instances hook (src/socialbench/moca/schema/hooks.py): the reader with the benchmark's taxonomy."""

import pytest

from socialbench.core.benchmarks import get_benchmark
from socialbench.core.errors import DataError
from socialbench.core.io import write_jsonl
from tests.conftest import make_instance


def test_the_hook_reads_valid_instances_in_file_order(tmp_path):
    write_jsonl(tmp_path / "i.jsonl", [make_instance("b"), make_instance("a", scenario="stance")])
    assert [i["id"] for i in get_benchmark("moca").schema.load_instances(tmp_path / "i.jsonl")] == ["b", "a"]


def test_a_label_outside_the_benchmarks_taxonomy_is_named_by_record_and_field(tmp_path):
    write_jsonl(tmp_path / "i.jsonl", [make_instance("x", label="no such label")])
    with pytest.raises(DataError) as err:
        get_benchmark("moca").schema.load_instances(tmp_path / "i.jsonl")
    assert (err.value.record, err.value.field) == ("x", "label")
