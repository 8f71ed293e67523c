"""What backends declare and what models take (socialbench.core.modalities)."""

import pytest


def test_a_model_takes_its_backends_default_modalities_when_params_declare_none():
    from socialbench.core.modalities import model_modalities

    assert model_modalities({"backend": "vllm"}) == (frozenset({"image", "frames", "video"}), False)
    assert model_modalities({"backend": "vllm", "modalities": ["image", "audio"]}) == (
        frozenset({"image", "audio"}),
        True,
    )


@pytest.mark.parametrize(
    ("entry", "sent"),
    [
        ({"backend": "anthropic"}, False),  # the pinned Anthropic API version takes no temperature
        ({"backend": "anthropic", "options": {"send_temperature": True}}, True),
        ({"backend": "openai_compat"}, True),
        ({"backend": "openai_compat", "options": {"send_temperature": False}}, False),
        ({"backend": "hf"}, True),
        ({"backend": "random"}, None),  # no model decodes
    ],
)
def test_whether_runs_send_a_temperature_is_derived_from_params(entry, sent):
    from socialbench.core.modalities import temperature_sent_of

    assert temperature_sent_of(entry) is sent
