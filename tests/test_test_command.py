"""The test command's own machinery: the order xdist hands out the groups (tests/conftest.py) and the
CPU-time report of ``--cpu-durations`` (tests/helpers/cpu_durations.py)."""

from __future__ import annotations

import os
from types import SimpleNamespace

from tests.conftest import pytest_collection_modifyitems, pytest_xdist_auto_num_workers
from tests.helpers.cpu_durations import cpu_seconds, group_of, summary


class FakeItem:
    """What the ordering hook reads of a collected test: its markers, fixtures and module."""

    def __init__(self, module: str, markers: tuple[str, ...] = (), fixtures: tuple[str, ...] = ()):
        self.module = SimpleNamespace(__name__=module)
        self.markers, self.fixturenames, self.added = set(markers), list(fixtures), []

    def get_closest_marker(self, name):
        return name if name in self.markers else None

    def add_marker(self, marker):
        self.added.append(marker)


def test_the_costliest_demo_group_then_slurm_and_the_services_come_first_then_heavy_groups_slow_ones_the_rest():
    items = [
        FakeItem("tests.h", fixtures=("demo_pipeline",)),
        FakeItem("tests.g", markers=("ssh",)),
        FakeItem("tests.a"),
        FakeItem("tests.b", markers=("slow",)),
        FakeItem("tests.results.test_tracking"),
        FakeItem("tests.c", markers=("slurm", "slow")),
        FakeItem("tests.d"),
        FakeItem("tests.test_pipeline", fixtures=("demo_pipeline",)),
        FakeItem("tests.b"),
        FakeItem("tests.test_real_model", markers=("slow",)),
        FakeItem("tests.f", markers=("postgres",)),
    ]
    pytest_collection_modifyitems(None, items)
    assert [it.module.__name__ for it in items] == [
        "tests.test_pipeline",
        "tests.c",
        "tests.g",
        "tests.f",
        "tests.test_real_model",
        "tests.results.test_tracking",
        "tests.h",
        "tests.b",
        "tests.b",
        "tests.a",
        "tests.d",
    ]
    assert [it.added[0].kwargs.get("name") or it.added[0].args[0] for it in items[:4]] == [
        "demo_pipeline:tests.test_pipeline",
        "slurm",
        "services",
        "services",
    ]
    assert items[6].added[0].args[0] == "demo_pipeline:tests.h"  # another demo group: with the heavy ones


def test_auto_workers_are_one_more_than_the_usable_cores(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    assert pytest_xdist_auto_num_workers(None) == len(os.sched_getaffinity(0)) + 1


def test_auto_workers_follow_xdists_own_override(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert pytest_xdist_auto_num_workers(None) == 3


def test_cpu_seconds_count_the_work_of_this_process():
    start = cpu_seconds()
    sum(i * i for i in range(300_000))
    assert cpu_seconds() > start


def test_the_group_of_a_test_is_its_xdist_group_else_its_module():
    assert group_of("tests/test_x.py::test_a[1]@demo_pipeline:tests.test_x") == "demo_pipeline:tests.test_x"
    assert group_of("tests/test_x.py::test_a") == "tests/test_x.py"


def test_the_summary_lists_the_costliest_tests_then_every_groups_total():
    times = {"t.py::a@g1": 1.0, "t.py::b@g2": 5.0, "t.py::c@g1": 4.5}
    lines = summary(times, 2)
    assert lines[0].endswith("t.py::b@g2") and lines[1].endswith("t.py::c@g1") and len(lines) == 5
    assert "total 10.5 s" in lines[2]
    assert lines[3].split() == ["5.50s", "cpu", "g1"] and lines[4].split() == ["5.00s", "cpu", "g2"]
