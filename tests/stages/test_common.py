"""What the stage commands share (src/socialbench/stages/common.py): the benchmark named by --benchmark,
the help listing the choices, and the instances a subset run answers."""

import pytest

from socialbench.core.benchmarks import get_benchmark
from socialbench.core.errors import ConfigError
from socialbench.stages import common
from tests.conftest import make_instance


def test_an_unknown_benchmark_is_a_config_error_listing_the_registered_ones():
    with pytest.raises(ConfigError, match="moca") as err:
        common.load_benchmark("mocha")
    assert "mocha" in str(err.value)


def test_the_benchmark_and_method_help_list_every_benchmark_and_its_methods():
    bench, method = common._choices()
    assert "moca" in bench and "meetingtom" in bench
    assert all(m in method for m in get_benchmark("moca").method_names())


def test_the_help_falls_back_to_plain_words_when_a_plug_in_cannot_be_loaded(monkeypatch):
    def broken():
        raise ImportError("a plug-in that does not import")

    monkeypatch.setattr(common, "available_benchmarks", broken)
    bench, method = common._choices()
    assert "`socialbench benchmarks` lists them" in bench and "`socialbench benchmarks` lists them" in method


def test_a_subset_larger_than_the_data_runs_every_instance_and_says_so():
    said = []
    insts = [make_instance(f"x{i}") for i in range(3)]
    params = {"seed": 1, "moca": {"subset": {"n": 10}}}
    chosen, info = common.subset_instances(
        get_benchmark("moca"), insts, params, "i.jsonl", echo=lambda m, err: said.append(m)
    )
    assert chosen == insts and info.whole
    assert said == ["moca.subset: n=10 is larger than the data (3 instances in i.jsonl): every instance runs"]


def test_without_a_subset_every_instance_runs_silently():
    said = []
    insts = [make_instance("x0")]
    chosen, info = common.subset_instances(
        get_benchmark("moca"), insts, {"seed": 1}, "i.jsonl", echo=lambda m, err: said.append(m)
    )
    assert (chosen, info, said) == (insts, None, [])
