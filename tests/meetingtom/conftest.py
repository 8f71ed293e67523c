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
    from socialbench.meetingtom.ami.nxt import parse_meeting

    return parse_meeting(ami_dir, MEETING)


@lru_cache(maxsize=1)
def _parsed(path: str):
    from socialbench.meetingtom.ami.nxt import parse_corpus

    return parse_corpus(path)


@pytest.fixture
def real_ami(shared_dir) -> Path:
    return shared_dir / "data" / "ami"


@pytest.fixture
def real_corpus(real_ami):
    """All 45 shared meetings, parsed once (a few seconds) and shared by the tests that read them."""
    return _parsed(str(real_ami))
