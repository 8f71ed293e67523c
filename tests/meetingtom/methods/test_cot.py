"""The reasoning methods (socialbench.meetingtom.methods.naive_cot, task_cot, ecot): one call, in
JSON mode with the reasoning and the answer in one object (or, with ``answer_form: final_line``,
prose ending in a "Final answer:" line, not JSON mode), the reasoning kept in the answer's fields
and its trace; Task-CoT adds the task's guidance with its participants filled in."""

import json

import pytest

from socialbench.core.backend import ModelSpec, Response
from socialbench.core.benchmarks import Exchange, Final, get_benchmark
from socialbench.meetingtom.schema.questions import TASKS
from tests.meetingtom.eval.test_prompts import make

SPEC = ModelSpec(name="m", backend="scripted")
BENCH = get_benchmark("meetingtom")
REASONING = ["naive_cot", "task_cot", "ecot"]


def method(name, settings=None):
    return BENCH.method(name, SPEC, 7, settings)


def first_request(name, inst):
    (req,) = method(name).step(inst, [])
    return req


def answered(name, inst, text):
    req = first_request(name, inst)
    return method(name).step(inst, [[Exchange(req, Response(text=text, finish_reason="stop"), "k")]])


@pytest.mark.parametrize("name", REASONING)
def test_the_request_is_json_mode_asking_for_reasoning_then_answer(name):
    req = first_request(name, make())
    assert req.decoding.json_object and req.request_id.endswith(f"/{name}/answer")
    assert '{"reasoning": "<your reasoning>", "answer": "<number>"}' in req.messages[1].text()
    assert 'your reasoning under the key "reasoning" first' in req.messages[0].text()


@pytest.mark.parametrize("name", REASONING)
def test_the_final_line_form_is_not_json_mode_and_asks_for_a_final_answer_line(name):
    (req,) = method(name, {"answer_form": "final_line"}).step(make(), [])
    assert not req.decoding.json_object
    assert 'give the final line "Final answer: " followed by {"answer": "<number>"}' in req.messages[1].text()
    assert "Final answer: <JSON object" in req.messages[0].text() and "$" not in req.messages[0].text()


@pytest.mark.parametrize("name", REASONING)
def test_a_json_answer_keeps_its_reasoning(name):
    inst = make("task3_1")
    final = answered(name, inst, json.dumps({"reasoning": "C frowns.", "answer": inst["answer"]}))
    assert final.error is None and final.fields["answer"] == inst["answer"]
    assert final.fields["reasoning"] == "C frowns." and final.trace == {"reasoning": "C frowns."}


@pytest.mark.parametrize("name", REASONING)
def test_the_answer_comes_from_the_last_final_answer_line_and_the_reasoning_is_kept(name):
    inst = make("task3_1")
    right, wrong = inst["answer"], next(o["label"] for o in inst["options"] if o["label"] != inst["answer"])
    raw = f'Everyone nods.\nFinal answer: {{"answer": "{wrong}"}}\nBut C frowns.\nFinal answer: {{"answer": "{right}"}}'
    final = answered(name, inst, raw)
    assert isinstance(final, Final) and final.error is None
    assert (final.fields["answer"], final.fields["value"], final.fields["raw"]) == (right, "pseudo_consensus", raw)
    reasoning = f'Everyone nods.\nFinal answer: {{"answer": "{wrong}"}}\nBut C frowns.'
    assert final.fields["reasoning"] == reasoning and final.trace == {"reasoning": reasoning}


@pytest.mark.parametrize("name", REASONING)
def test_a_bare_answer_object_without_the_marker_is_accepted(name):
    inst = make()
    final = answered(name, inst, f'{{"answer": "{inst["answer"]}"}}')
    assert final.error is None and final.fields["answer"] == inst["answer"] and final.fields["reasoning"] is None


@pytest.mark.parametrize("name", REASONING)
def test_prose_without_the_marker_is_invalid_saying_the_line_is_missing(name):
    final = answered(name, make(), "D is looked at, so the answer is D.")
    assert final.fields["answer"] is None and final.error.startswith("no answer object and no 'Final answer:' line")


def test_a_task3_2_final_line_gives_the_sorted_dissenters_and_their_letters():
    inst = make("task3_2")
    final = answered(
        "naive_cot", inst, "B and D hesitate.\nFinal answer: " + json.dumps({"answer": inst["answer"][::-1]})
    )
    assert final.fields["answer"] == inst["answer"] and final.fields["value"] == ["B", "D"]


@pytest.mark.parametrize(
    "task,filled",
    [
        ("task1", "1. Subject: find participant C in the transcript"),
        ("task2_1", '1. The "you": read participant B\'s utterance'),
        (
            "task2_2",
            "2. The addressee's verbal response: agreement, objection,"
            " acknowledgement, hedging or hesitation from participant D.",
        ),
        ("task3_2", "5. Choose every participant who is a dissenter."),
    ],
)
def test_task_cot_gives_the_tasks_guidance_with_its_participants_filled_in(task, filled):
    text = first_request("task_cot", make(task)).messages[1].text()
    assert filled in text and "$" not in text


def test_task_cot_gives_only_its_own_tasks_guidance():
    text = first_request("task_cot", make("task1")).messages[1].text()
    assert "Focused Listening receives attentively" in text and "The decision:" not in text and 'The "you"' not in text


@pytest.mark.parametrize("name", ["naive_cot", "ecot"])
def test_the_other_reasoning_methods_give_no_task_guidance(name):
    assert "1. Subject: find participant" not in first_request(name, make("task1")).messages[1].text()


#: ECoT's five published steps (Li et al. 2024, after Goleman), in their order.
ECOT_STEPS = (
    "understanding the context",
    "recognizing others' emotions",
    "recognizing the subject's emotions",
    "managing emotions",
    "influencing others' emotions",
)


def test_ecot_asks_for_the_five_published_steps_in_their_order():
    text = first_request("ecot", make()).messages[1].text()
    at = [text.find(f"Step {k}, {step}:") for k, step in enumerate(ECOT_STEPS, 1)]
    assert -1 not in at and at == sorted(at)


def test_task_cots_prompt_hash_covers_its_guidance_files():
    assert method("task_cot").templates == ("system.txt", "user.txt", *(f"{t}.txt" for t in TASKS))
