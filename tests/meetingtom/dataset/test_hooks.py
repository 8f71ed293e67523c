"""MeetingToM's data-stage hooks (src/socialbench/meetingtom/dataset/hooks.py): the demo release from params;
no prepare stage of its own (its data stages are its commands)."""

import pytest

from socialbench.core.benchmarks import get_benchmark
from socialbench.core.errors import SocialbenchError
from socialbench.meetingtom.schema.settings import DEMO_ARCHIVE
from tests.meetingtom.conftest import mt_params


def test_the_demo_writes_the_release_archive_params_ask_for(tmp_path):
    demo = {"corpus": ["ES9000a"], "meetings": ["ES9000a"], "seconds": 55, "fps": 1, "size": [64, 64]}
    params = mt_params({"demo": demo, "dev_meetings": []})
    get_benchmark("meetingtom").dataset.demo(params, tmp_path)
    assert (tmp_path / DEMO_ARCHIVE).is_file()


def test_prepare_is_refused(tmp_path):
    with pytest.raises(SocialbenchError, match="has no prepare stage"):
        get_benchmark("meetingtom").dataset.prepare(tmp_path / "raw.jsonl", "drop")
