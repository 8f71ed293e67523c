"""MeetingToM's instances hook (src/socialbench/meetingtom/schema/hooks.py)."""

import pytest

from socialbench.core.benchmarks import get_benchmark
from socialbench.core.errors import DataError
from socialbench.core.io import write_jsonl
from tests.meetingtom.dataset.test_instances import make


def test_the_hook_reads_the_instances_file(tmp_path):
    write_jsonl(tmp_path / "i.jsonl", [make()])
    assert [i["id"] for i in get_benchmark("meetingtom").schema.load_instances(tmp_path / "i.jsonl")] == [make()["id"]]


def test_a_bad_instance_is_named_by_its_file(tmp_path):
    write_jsonl(tmp_path / "i.jsonl", [{**make(), "task": "task9"}])
    with pytest.raises(DataError) as err:
        get_benchmark("meetingtom").schema.load_instances(tmp_path / "i.jsonl")
    assert (err.value.path, err.value.field) == (str(tmp_path / "i.jsonl"), "task")
