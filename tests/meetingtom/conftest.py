"""Fixtures for MeetingToM tests: a tiny AMI folder written into tmp_path, and the real AMI
annotations from ../shared parsed once per session (skipped when ../shared is absent)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from tests.meetingtom.tiny_ami import MEETING, make_ami


@pytest.fixture
def ami_dir(tmp_path) -> Path:
    return make_ami(tmp_path / "ami")


@pytest.fixture
def tiny_meeting(ami_dir):
    from socialbench.meetingtom.dataset.ami.nxt import parse_meeting

    return parse_meeting(ami_dir, MEETING)


@lru_cache(maxsize=1)
def _parsed(path: str):
    from socialbench.meetingtom.dataset.ami.nxt import parse_corpus

    return parse_corpus(path)


@pytest.fixture
def real_ami(shared_dir) -> Path:
    return shared_dir / "data" / "ami"


@pytest.fixture
def real_corpus(real_ami):
    """All 45 shared meetings, parsed once (a few seconds) and shared by the tests that read them."""
    return _parsed(str(real_ami))


# ---- the demo release, small and fast (generated once per test session) -------------------------
DEMO_MEETINGS = ("ES9000a", "ES9000b")


def mt_params(meetingtom: dict | None = None, seed: int = 7, **core) -> dict:
    """Validated params (defaults filled) with a meetingtom section, for the stages' functions."""
    from socialbench.core.config import validate_params

    raw = {
        "seed": seed,
        "models": {
            "random": {"backend": "random", "category": "baseline"},
            "prior": {"backend": "prior", "category": "baseline"},
        },
        "meetingtom": meetingtom or {},
        **core,
    }
    return validate_params(raw)


@pytest.fixture(scope="session")
def demo_cfg():
    from socialbench.meetingtom.dataset.demo_script import DemoConfig

    return DemoConfig(seed=7, corpus=DEMO_MEETINGS, seconds=110, fps=4, size=(96, 72), sample_rate=8000)


@pytest.fixture(scope="session")
def demo_mirror(tmp_path_factory, demo_cfg) -> Path:
    from socialbench.meetingtom.dataset.demo import generate

    out = tmp_path_factory.mktemp("mt-demo") / "mirror"
    generate(out, demo_cfg)
    return out


def source_for(mirror, name: str = "demo", **over):
    """A SourceSettings reading ``mirror`` (the demo archive name unless ``url`` is given)."""
    import dataclasses

    from socialbench.meetingtom.schema.settings import source_settings

    base = source_settings(
        mt_params({"demo": {"corpus": list(DEMO_MEETINGS), "meetings": list(DEMO_MEETINGS)}, "dev_meetings": []}),
        "demo",
    )
    return dataclasses.replace(base, name=name, mirror=None if mirror is None else str(mirror), **over)


@pytest.fixture(scope="session")
def demo_release(tmp_path_factory, demo_mirror) -> dict:
    from socialbench.meetingtom.dataset.release import acquire_release

    work = tmp_path_factory.mktemp("mt-release")
    return acquire_release(source_for(demo_mirror), work / "release", work / "downloads")


@pytest.fixture(scope="session")
def demo_extract(demo_release) -> dict:
    """ES9000a's extraction records (socialbench.meetingtom.dataset.extract)."""
    from socialbench.meetingtom.dataset.extract import extract_meeting

    return extract_meeting(demo_release["annotations"], "ES9000a", "demo", {})


@pytest.fixture(scope="session")
def demo_clips(tmp_path_factory, demo_mirror, demo_extract) -> dict:
    """ES9000a's media fetched and its you windows cut into clips: {"fetched", "summary", "out", "records"}."""
    from socialbench.core.io import read_jsonl
    from socialbench.media.settings import MediaSettings
    from socialbench.meetingtom.dataset.clips import make_clips
    from socialbench.meetingtom.dataset.release import fetch_meeting_media

    work = tmp_path_factory.mktemp("mt-clips")
    fetched = fetch_meeting_media(source_for(demo_mirror), "ES9000a", work / "raw")
    m = demo_extract
    summary = make_clips(
        m["meeting.json"],
        m["candidates.jsonl"],
        m["words.jsonl"],
        fetched,
        work / "clips",
        tasks=["you"],
        settings=MediaSettings(),
        root=work,
    )
    return {
        "fetched": fetched,
        "summary": summary,
        "out": work / "clips",
        "root": work,
        "records": read_jsonl(work / "clips" / "clips.jsonl"),
    }
