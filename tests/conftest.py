"""Shared fixtures. Tests mirror src/socialbench/."""

from __future__ import annotations

import atexit
import gc
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"

#: `--cpu-durations=N`: the costliest tests and xdist groups by CPU time, not wall time (docs/benchmarks.md).
pytest_plugins = ["tests.helpers.cpu_durations"]

#: A test process (an xdist worker, the controller) ends without the interpreter's last garbage collections
#: over all it imported (torch, transformers, MLflow, DVC, Snakemake): 2-3 s a process alone, 5-9 s for
#: three workers ending at once on two cores (docs/benchmarks.md, "Test command"). Exit handlers all run
#: before that teardown, so their order does not matter; objects are still freed as modules are torn down.
atexit.register(gc.freeze)

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


#: Markers of tests that install and start a real service (PostgreSQL, Slurm, sshd) themselves.
SERVICE_MARKERS = ("postgres", "slurm", "ssh")


#: CPU seconds of the costliest groups besides the Slurm run's and the services' (`--cpu-durations`,
#: docs/benchmarks.md "Test command": 2026-12-07, third session; the sources' rules with ../shared; a
#: demo group's without the build): handed out after those, costliest first, so that none starts late.
HEAVY_GROUPS = {
    "tests.moca.dataset.sources.test_rules": 130,
    "demo_pipeline:tests.test_pipeline": 80,
    "tests.test_real_model": 33,
    "tests.test_workflow": 27,
    "tests.results.test_viewer": 26,
    "demo_pipeline:tests.test_real_server": 22,
    "demo_pipeline:tests.test_stage_deps": 20,
    "tests.results.test_tracking": 14,
    "tests.bad_input.test_params": 12,
}


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (the test command): one worker more than the cores this process may use. The Slurm
    test's worker mostly waits (the executor plugin polls the cluster at growing intervals), and the
    demo run's worker waits on its snakemake runs: with a worker per core a core stood idle for
    minutes (docs/benchmarks.md, "Test command"). ``--maxprocesses`` still caps it."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):  # xdist's own override, kept
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return len(os.sched_getaffinity(0)) + 1


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """For pytest-xdist (`--dist loadgroup`): a module's tests stay on one worker, so its module-scoped
    fixtures are built once; the tests of a module that read the session's demo run are a group of their
    own ("demo_pipeline:<module>"), and the costliest of those groups is handed out first: its worker
    builds the run (once for all workers, tests/helpers/pipeline.py ``shared_demo_pipeline``), and the
    other demo groups, handed out later, find it built. The Slurm test (MoCA's inference and a demo meeting on a
    one-node cluster) is a group of its own, and the other tests of real services (PostgreSQL, sshd) share one
    worker. The longest groups come first, one to each worker: the demo build's, the Slurm run's, the
    services'; then the measured heavy groups (HEAVY_GROUPS), costliest first; then the other groups
    holding slow tests; then the rest, each in collection order. xdist hands out groups in this order,
    and a long group handed out late would leave the other workers idle at the end. Installing a
    service's Debian packages waits for another test's apt-get (the scripts pass apt-get its lock
    timeout)."""
    groups = {}
    for item in items:
        if item.get_closest_marker("slurm"):
            group = "slurm"
        elif any(item.get_closest_marker(m) for m in SERVICE_MARKERS):
            group = "services"
        elif "demo_pipeline" in item.fixturenames:
            group = f"demo_pipeline:{item.module.__name__}"
        else:
            group = item.module.__name__
        groups[item] = group
        item.add_marker(pytest.mark.xdist_group(group))
    slow = {g for item, g in groups.items() if item.get_closest_marker("slow")}
    demo = [g for g in dict.fromkeys(groups.values()) if g.startswith("demo_pipeline:")]
    first = {"slurm": 1, "services": 2}
    if demo:
        first[max(demo, key=lambda g: HEAVY_GROUPS.get(g, 0))] = 0
    heavy = {g for g in groups.values() if g in HEAVY_GROUPS or g.startswith("demo_pipeline:")}
    rank = {g: first.get(g, 3 if g in heavy else 4 if g in slow else 5) for g in set(groups.values())}
    key = {g: (r, -HEAVY_GROUPS.get(g, 0)) for g, r in rank.items()}
    items[:] = [it for _, it in sorted(enumerate(items), key=lambda e: (key[groups[e[1]]], e[0]))]


def pytest_collection_finish(session):
    """On an xdist worker under `--dist loadgroup`, every test must carry its group (pytest-xdist adds
    it to the test's id): pytest 9.2 drops it, and then xdist spreads a group over the workers and each
    builds the session's demo run again (pyproject.toml pins pytest below 9.2). Stop rather than run
    the suite twice as slow."""
    if getattr(session.config.option, "loadgroup", False) and any("@" not in i.nodeid for i in session.items):
        raise pytest.UsageError(
            "pytest-xdist's loadgroup did not tag the tests with their xdist_group (pytest 9.2 or later?):"
            " install the pinned pytest (bash scripts/setup.sh)"
        )


@pytest.fixture(autouse=True)
def no_shared_store_from_an_earlier_test(monkeypatch):
    """The commands read MLFLOW_TRACKING_URI and SOCIALBENCH_CACHE_URL before params (docs/scale-out.md);
    socialbench never sets them (tracking uses an explicit client), but the shell running the tests may:
    each test starts without them."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("SOCIALBENCH_CACHE_URL", raising=False)


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"needs ../shared (real public annotations), absent at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def demo_pipeline(tmp_path_factory):
    """The whole demo pipeline, run once per test command in a fresh copy of the repository: (work dir,
    env, output). The first xdist worker to ask builds it in the workers' shared base folder, the others
    wait for it. Read it only; a test that changes the tree takes ``demo_pipeline_copy``."""
    from tests.helpers.pipeline import shared_demo_pipeline

    base = tmp_path_factory.getbasetemp()
    return shared_demo_pipeline(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)


@pytest.fixture
def demo_pipeline_copy(demo_pipeline, tmp_path):
    """This test's own copy of the finished demo run (nothing in it is out of date), to change freely."""
    from tests.helpers.pipeline import copy_run

    return copy_run(demo_pipeline, tmp_path)


@pytest.fixture
def taxonomy():
    from socialbench.moca.schema.taxonomy import load_taxonomy

    return load_taxonomy()


def make_instance(iid: str = "x-0001", scenario: str = "intent", **over) -> dict:
    """A valid MoCA instance (image-text) for tests; the media path is not checked by the schema."""
    base = {
        "id": iid,
        "source": "test",
        "modality": "image_text",
        "text": "Nice job, genius.",
        "transcript": None,
        "media": ["img.png"],
        "scenario": scenario,
        "domain": "peer",
        "culture": "general context",
        "subject_options": ["the speaker", "the coach", "the fan", "the referee"],
        "target_options": ["the player", "the crowd", "the team", "the press"],
        "subject": "the speaker",
        "target": "the player",
        "mechanism": {
            "intent": "expressive aggression",
            "affection": "affective deception",
            "stance": "dominant detachment",
        }[scenario],
        "label": {"intent": "mock", "affection": "angry", "stance": "dismissive"}[scenario],
    }
    base.update(over)
    return base
