"""The scripted test double: scripted answers, failures and finish reasons; it takes any part."""

from __future__ import annotations

import pytest

from socialbench.core.backend import AudioPart, ModelSpec, VideoPart, check_requests, create_backend
from socialbench.core.errors import ConfigError
from tests.helpers.moca_requests import moca_request


def scripted(**options):
    return create_backend(ModelSpec(name="s", backend="scripted", options={"default": "{}", **options}))


def test_answers_finish_with_stop_unless_scripted_otherwise():
    backend = scripted(finish_reasons={moca_request(1).request_id: "length"})
    plain, cut = backend.complete(moca_request(0)), backend.complete(moca_request(1))
    assert (plain.finish_reason, plain.truncated) == ("stop", False)
    assert (cut.text, cut.finish_reason, cut.truncated) == ("{}", "length", True)


def test_failures_finish_with_error():
    backend = scripted(fail_ids=[moca_request(0).request_id], default=None)
    failed, unscripted = backend.complete(moca_request(0)), backend.complete(moca_request(1))
    assert failed.error and failed.finish_reason == "error" and unscripted.finish_reason == "error"


def test_an_unknown_finish_reason_is_a_config_error():
    with pytest.raises(ConfigError, match="finish_reasons: truncated not one of"):
        scripted(finish_reasons={"x": "truncated"})


def test_the_scripted_finish_reasons_are_part_of_the_identity():
    assert scripted().identity() != scripted(finish_reasons={"x": "length"}).identity()


def test_it_takes_every_kind_of_part():
    parts = [AudioPart("a.wav", "0" * 64), VideoPart(path="c.mp4", sha256="1" * 64)]
    check_requests(scripted(), [moca_request(0, parts)])  # nothing refused (the files need not exist)
    assert scripted().complete(moca_request(0, parts)).text == "{}"
