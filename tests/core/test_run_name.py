"""core.run_name: the one reader and writer of run names (``<method>[__<ablation>][__order<k>]``)."""

import pytest

from socialbench.core.run_name import RunName


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("direct", RunName("direct")),
        ("no_prompt__prior_role", RunName("no_prompt", "prior_role")),
        ("direct__order1", RunName("direct", None, 1)),
        ("codar__wo_step2__order2", RunName("codar", "wo_step2", 2)),
        ("codar__wo_step2__order12", RunName("codar", "wo_step2", 12)),
    ],
)
def test_a_run_name_parses_into_its_parts_and_prints_back_the_same_string(name, parts):
    assert RunName.parse(name) == parts
    assert str(parts) == name


def test_an_ablation_holding_the_separator_is_kept_whole():
    rn = RunName.parse("codar__wo_step2__strict")
    assert (rn.method, rn.ablation, rn.order) == ("codar", "wo_step2__strict", 0)
    assert str(rn) == "codar__wo_step2__strict"


def test_an_order_run_is_its_run_under_another_order_and_order_0_is_the_run_itself():
    rn = RunName.parse("codar__wo_step2")
    assert str(rn.with_order(2)) == "codar__wo_step2__order2"
    assert rn.with_order(0) == rn
    assert RunName.parse("codar__wo_step2__order2").run == rn
    assert rn.run is rn


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("", "run name '': the method part is empty"),
        ("__x", "run name '__x': the method part is empty"),
        ("direct__", "run name 'direct__': the ablation part is empty"),
        ("codar__a____b", "run name 'codar__a____b': the ablation part is empty"),
        ("direct__order0", "run name 'direct__order0': 'order0' is no option order"),
        ("direct__order01", "run name 'direct__order01': 'order01' is no option order"),
        ("direct__order1__x", "run name 'direct__order1__x': order<k> names an option order, not an ablation"),
    ],
)
def test_a_bad_run_name_is_a_clear_error_naming_it(name, says):
    with pytest.raises(ValueError) as exc:
        RunName.parse(name)
    assert str(exc.value).startswith(says), str(exc.value)


@pytest.mark.parametrize(
    ("parts", "says"),
    [
        (("", None, 0), "the method part is empty"),
        (("codar__x", None, 0), "the method part holds '__'"),
        (("codar", "order3", 0), "order<k> names an option order"),
        (("codar", None, -1), "an option order is a whole number from 0"),
    ],
)
def test_parts_that_make_no_run_name_are_refused_when_built(parts, says):
    with pytest.raises(ValueError, match=says):
        RunName(*parts)


def test_a_run_name_is_frozen():
    with pytest.raises(AttributeError):
        RunName("direct").order = 1  # type: ignore[misc]
