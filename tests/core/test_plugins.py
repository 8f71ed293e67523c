"""The one registry type of plug-ins: lazy entries, classes registered directly, names from sources,
and errors that name the plug-in, what is known and what to install."""

import pytest

from socialbench.core.errors import ConfigError, MissingDependency
from socialbench.core.plugins import Registry, install_hint


class Base:
    name = ""


class Plain(Base):
    pass


def test_a_lazy_entry_is_imported_on_first_use_and_named_as_asked():
    reg = Registry("widget", Base, {"plain": (__name__, "Plain", None)})
    assert reg.get("plain") is Plain and Plain.name == "plain"


def test_a_class_registered_directly_is_returned_as_is():
    reg = Registry("widget", Base)

    class Direct(Base):
        pass

    assert reg.add_class("direct", Direct) is Direct
    assert reg.get("direct") is Direct and "direct" in reg


def test_an_unknown_name_lists_the_known_ones():
    reg = Registry("widget", Base, {"b": (__name__, "Plain", None), "a": (__name__, "Plain", None)})
    with pytest.raises(ConfigError, match=r"unknown widget 'c'; available: a, b"):
        reg.get("c")


def test_a_missing_package_names_the_extra_to_install():
    reg = Registry("widget", Base, {"gpu": ("no_such_package_xyz.widgets", "Gpu", "vllm")})
    with pytest.raises(
        MissingDependency, match=r"widget 'gpu' needs a package .*no_such_package_xyz.*socialbench\[vllm\]"
    ):
        reg.get("gpu")


def test_an_entry_that_is_not_a_subclass_of_the_base_is_refused():
    reg = Registry("widget", Base, {"path": ("pathlib", "Path", None)})
    with pytest.raises(ConfigError, match=r"widget 'path': pathlib:Path is not a .*Base subclass"):
        reg.get("path")


def test_a_source_is_asked_on_a_miss_and_counted_among_the_names():
    reg = Registry("widget", Base)
    reg.add_source(lambda: {"contributed": (__name__, "Plain", None)})
    assert "contributed" in reg and reg.names() == ["contributed"] and reg.get("contributed") is Plain
    assert reg.entry("contributed") == (__name__, "Plain", None) and reg.entry("other") is None


def test_a_source_added_twice_is_asked_once():
    reg = Registry("widget", Base)
    asked = []

    def source():
        asked.append(1)
        return {}

    reg.add_source(source)
    reg.add_source(source)
    reg.names()
    assert asked == [1]


def test_the_install_hint_names_the_extra_or_a_reinstall():
    assert install_hint("hf") == "pip install 'socialbench[hf]'"
    assert install_hint(None) == "reinstall socialbench"


#: A plug-in that is an object of its kind (a MoCA source's SOURCE, a command's app).
PLAIN = Plain()


def test_an_entry_that_is_an_object_of_the_base_is_returned_as_it_is():
    reg = Registry("widget", Base, {"obj": (__name__, "PLAIN", None)})
    assert reg.get("obj") is PLAIN


def test_an_object_that_is_no_base_is_refused_naming_its_entry():
    reg = Registry("widget", Base, {"num": (__name__, "PLAIN_NUMBER", None)})
    with pytest.raises(ConfigError, match=r"widget 'num': tests\.core\.test_plugins:PLAIN_NUMBER is not a"):
        reg.get("num")


PLAIN_NUMBER = 3
