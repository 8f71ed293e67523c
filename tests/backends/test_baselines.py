"""The weight-free baselines (socialbench.backends.baselines): the prior's majority by option key."""

import json

from socialbench.core.backend import BackendContext, Message, ModelSpec, Request, create_backend


def test_the_prior_counts_options_by_key_and_answers_with_the_options_value():
    # MeetingToM's letters are positions in a per-instance shuffle: the dev split's majority is a
    # class ("hesitation"), found here under the letter C.
    dev = [{"group": "task1", "answers": {"answer": v}} for v in ("hesitation", "hesitation", "focused_listening")]
    prior = create_backend(ModelSpec(name="prior", backend="prior"), BackendContext(seed=1, dev_answers=dev))
    options = [
        {"value": "A", "key": "focused_listening", "text": "x"},
        {"value": "B", "key": "active_engagement", "text": "y"},
        {"value": "C", "key": "hesitation", "text": "z"},
    ]
    task = {"prior_group": "task1", "choices": [{"field": "answer", "options": options}]}
    response = prior.complete(Request(request_id="i/no_prompt/answer", messages=(Message("user", ("q",)),), task=task))
    assert json.loads(response.text) == {"answer": "C"}
