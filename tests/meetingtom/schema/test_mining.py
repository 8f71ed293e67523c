"""The mining thresholds as params give them (socialbench.meetingtom.schema.mining): overrides, and
every unknown key or bad value refused naming it."""

import pytest

from socialbench.core.errors import ConfigError
from socialbench.meetingtom.schema.mining import YOU_TYPES, MiningParams, WindowRule, YouParams


def test_window_rule_with_minimum_above_preferred_is_a_config_error():
    with pytest.raises(ConfigError):
        WindowRule(preferred_s=50, min_s=60, max_s=70)


def test_params_from_mapping_override_only_what_they_name():
    p = MiningParams.from_mapping({"consensus": {"window": {"preferred_s": 55}}, "state": {"min_speaker_speech_s": 2}})
    assert p.consensus.window == WindowRule(preferred_s=55.0, before_s=5.0, after_s=5.0)
    assert p.state.min_speaker_speech_s == 2.0 and p.you == YouParams()


def test_params_with_an_unknown_key_are_a_config_error():
    with pytest.raises(ConfigError, match="unknown key"):
        MiningParams.from_mapping({"you": {"max_ancor_s": 3}})


def test_params_with_a_wrong_kind_of_value_are_a_config_error():
    with pytest.raises(ConfigError, match="list of strings"):
        MiningParams.from_mapping({"consensus": {"proposal_act_types": "sug"}})


def test_an_unknown_you_type_is_refused_naming_the_key_and_the_known_values():
    """Issue 33, class 9: `you_999` is no AMI you-type; accepted, it would mine no Task 2.1 candidate at all."""
    with pytest.raises(ConfigError) as err:
        MiningParams.from_mapping({"you": {"you_type": "you_999"}})
    assert str(err.value).startswith("mining.you.you_type: 'you_999' is not one of the known values: you_1 (deictic),")
    assert all(t in str(err.value) for t in YOU_TYPES)


def test_every_ami_you_type_is_accepted():
    assert [MiningParams.from_mapping({"you": {"you_type": t}}).you.you_type for t in YOU_TYPES] == list(YOU_TYPES)
