"""The fixtures of the bad-input suite: the clip every small repository holds, and the small repository
(built once per session, copied for each test: a case changes its own copy)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bad_input.cases import build_ws


@pytest.fixture(scope="session")
def clip(tmp_path_factory) -> Path:
    from tests.helpers.media_synth import generate_indexed_video

    return generate_indexed_video(tmp_path_factory.mktemp("clip") / "clip.mp4", frames=20, fps=10)


@pytest.fixture(scope="session")
def ws_template(tmp_path_factory, clip) -> Path:
    """The small repository as built (params, instances, predictions, a score file, an image, the clip):
    copied, never changed."""
    return build_ws(tmp_path_factory.mktemp("ws-template") / "repo", clip)


@pytest.fixture
def ws(tmp_path, monkeypatch, ws_template) -> Path:
    """The small repository (a git checkout: a ``.git`` folder) as the working folder, in a folder of
    its own, so that a case may name an output beside it (``../o.jsonl``), as a user may."""
    root = shutil.copytree(ws_template, tmp_path / "repo", symlinks=True)
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root
