"""The model backends are registered by name, and a missing optional dependency names its extra."""

from __future__ import annotations

import sys

import pytest

from socialbench.core.backend import available_backends, get_backend_class
from socialbench.core.errors import MissingDependency

BACKENDS = {  # name -> (module that implements it, a package it imports, the extra that installs it)
    "hf": ("socialbench.backends.hf", "transformers", "hf"),
    "vllm": ("socialbench.backends.vllm_backend", "openai", "vllm"),
    "openai_compat": ("socialbench.backends.openai_compat", "openai", "openai"),
    "anthropic": ("socialbench.backends.anthropic_backend", "anthropic", "anthropic"),
    "minilm": ("socialbench.backends.minilm", "transformers", "minilm"),
}


def test_model_backends_are_registered():
    assert set(BACKENDS) <= set(available_backends())


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_missing_dependency_gives_the_install_hint(name, monkeypatch):
    _, package, extra = BACKENDS[name]
    for loaded in [m for m in sys.modules if m.startswith("socialbench.backends.")]:
        if loaded != "socialbench.core.backend":  # re-import the backend modules, not the registry
            monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setitem(sys.modules, package, None)  # makes `import package` fail
    with pytest.raises(MissingDependency, match=rf"pip install 'socialbench\[{extra}\]'"):
        get_backend_class(name)


ACCEPTS = {  # what each backend takes besides text (a video as frames needs only "image")
    "openai_compat": {"image", "audio"},
    "anthropic": {"image"},
    "vllm": {"image", "video", "audio"},
    "hf": {"image"},
    "scripted": {"image", "video", "audio"},  # these read only the task: any part is ignored
    "random": {"image", "video", "audio"},
    "prior": {"image", "video", "audio"},
    "minilm": {"image", "video", "audio"},
    "file": {"image", "video", "audio"},
}


@pytest.mark.parametrize("name", sorted(ACCEPTS))
def test_each_backend_declares_the_parts_it_takes(name):
    assert get_backend_class(name).accepts == frozenset(ACCEPTS[name])


def test_a_benchmark_contributed_backend_is_available_by_name():
    from socialbench.core.backend import available_backends, get_backend_class
    from socialbench.moca.eval.testing import CodarScriptBackend

    assert "codar_script" in available_backends()
    assert get_backend_class("codar_script") is CodarScriptBackend


def test_a_backend_source_is_asked_on_a_miss(monkeypatch):
    from socialbench.backends.scripted import ScriptedBackend
    from socialbench.core import backend

    monkeypatch.setattr(ScriptedBackend, "name", ScriptedBackend.name)  # the lookup names the class
    monkeypatch.setattr(backend.BACKENDS, "sources", [])
    backend.add_source(lambda: {"echo2": ("socialbench.backends.scripted", "ScriptedBackend")})
    assert backend.get_backend_class("echo2").__name__ == "ScriptedBackend"


# what each backend's models take when params declare no modalities (its declaration file)
DEFAULT_MODALITIES = {
    "openai_compat": {"image", "frames"},
    "anthropic": {"image", "frames"},
    "vllm": {"image", "frames", "video"},
    "hf": {"image", "frames"},
    "scripted": {"image", "frames", "video", "audio"},
    "random": {"image", "frames", "video", "audio"},
    "prior": {"image", "frames", "video", "audio"},
    "minilm": {"image", "frames", "video", "audio"},
    "file": {"image", "frames", "video", "audio"},
}


@pytest.mark.parametrize("name", sorted(DEFAULT_MODALITIES))
def test_each_backend_declares_the_default_modalities_of_its_models(name):
    from socialbench.core.modalities import backend_declaration

    assert backend_declaration(name).modalities == frozenset(DEFAULT_MODALITIES[name])


def test_every_registered_backend_has_a_declaration_file_within_what_it_carries():
    from socialbench.core.backend import BACKENDS, carried_modalities
    from socialbench.core.modalities import backend_declaration
    from socialbench.core.plugins import sidecar_json

    for name in available_backends():
        entry = BACKENDS.entry(name)
        if entry is not None and entry[0].startswith("socialbench.backends."):
            assert sidecar_json(entry[0], ".declaration.json").get(entry[1]) is not None, name
        declared = backend_declaration(name)
        assert declared.modalities <= carried_modalities(declared.accepts), name


def test_the_class_takes_its_declaration_from_the_file():
    from socialbench.backends.baselines import PriorBackend
    from socialbench.backends.file import FileBackend

    assert PriorBackend.choices_only == "answers multiple choice only"
    assert FileBackend.default_modalities == frozenset({"image", "frames", "video", "audio"})


def test_a_declaration_is_read_without_importing_the_backend_module():
    from socialbench.core.modalities import backend_declaration

    before = "socialbench.backends.hf" in sys.modules
    assert backend_declaration("hf").accepts == frozenset({"image"})
    assert ("socialbench.backends.hf" in sys.modules) == before


#: The backends that run no model: their own code decides their answers (test doubles, baselines,
#: recorded answers), so its hash is in their identity. minilm runs a model (its rule is versioned by hand).
ANSWERS_FROM_CODE = {"random", "prior", "scripted", "file", "codar_script"}


@pytest.mark.parametrize("name", sorted(set(ACCEPTS) | {"codar_script"}))
def test_exactly_the_backends_that_run_no_model_version_their_answers_by_their_code(name):
    assert get_backend_class(name).answers_from_code == (name in ANSWERS_FROM_CODE)
