"""The fixtures of the bad-input suite: the clip every small repository holds, and the small repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bad_input.cases import build_ws


@pytest.fixture(scope="session")
def clip(tmp_path_factory) -> Path:
    from tests.helpers.media_synth import generate_indexed_video

    return generate_indexed_video(tmp_path_factory.mktemp("clip") / "clip.mp4", frames=20, fps=10)


@pytest.fixture
def ws(tmp_path, monkeypatch, clip) -> Path:
    """The small repository (a git checkout: a ``.git`` folder) as the working folder, in a folder of
    its own, so that a case may name an output beside it (``../o.jsonl``), as a user may."""
    root = build_ws(tmp_path / "repo", clip)
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root
