"""MeetingToM's one-call answering methods (src/socialbench/meetingtom/methods/__init__.py,
``AnsweringMethod``, which No Prompt, Naive-CoT, Task-CoT and ECoT subclass): the instances answered
without a call (Task 1 with priors, video runs on a source without media or a clip that failed), and
the guidance files of Task-CoT. Each method's own prompts and answers are tested in
tests/meetingtom/methods/."""

import pytest

from socialbench.core.backend import ModelSpec
from socialbench.core.benchmarks import Final, get_benchmark
from socialbench.meetingtom.methods import NOT_EVALUATED_NO_VIDEO
from tests.meetingtom.eval.test_prompts import make

SPEC = ModelSpec(name="m", backend="scripted")
BENCH = get_benchmark("meetingtom")
METHODS = ["no_prompt", "naive_cot", "task_cot", "ecot"]


def method(name, settings=None):
    return BENCH.method(name, SPEC, 7, settings)


@pytest.mark.parametrize("name", METHODS)
def test_task1_with_priors_is_not_evaluated_without_a_call(name):
    final = method(name, {"priors": ["role"]}).step(make("task1"), [])
    assert isinstance(final, Final) and final.error is None
    assert final.fields["not_evaluated"].startswith("Task 1 is not evaluated")


@pytest.mark.parametrize("name", METHODS)
def test_a_media_error_with_a_video_modality_is_invalid_without_a_call(name):
    final = method(name, {"modality": "video"}).step(
        make(modality="both", clip=None, clip_problem="window_beyond_end"), []
    )
    assert isinstance(final, Final) and final.error == "media: no clip for this window (window_beyond_end)"
    assert final.fields["answer"] is None and final.fields["raw"] is None


def test_a_media_error_does_not_stop_an_utterances_only_request():
    (req,) = method("ecot", {"modality": "utterances"}).step(
        make(modality="both", clip=None, clip_problem="window_beyond_end"), []
    )
    assert req.media() == []


def test_a_video_run_on_a_source_without_media_is_not_evaluated_without_a_call():
    final = method("no_prompt", {"modality": "video"}).step(make(modality="utterances", clip=None), [])
    assert isinstance(final, Final) and final.error is None
    assert final.fields["not_evaluated"] == NOT_EVALUATED_NO_VIDEO
