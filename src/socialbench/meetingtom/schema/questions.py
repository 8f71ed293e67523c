"""The fixed question templates and option vocabularies of the five subtasks (paper 3.2, appendix A, B.2);
pure, wording ours (docs/decisions/meetingtom-methods.md). Options are labelled 1, 2, 3... after a seeded
shuffle: numbers, never letters, which the participants A-D are."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from string import Template
from typing import Any

TASKS = ("task1", "task2_1", "task2_2", "task3_1", "task3_2")
#: Tasks whose gold comes from the annotation round-trip (Task 2.1's comes from AMI's you events).
ANNOTATED = ("task1", "task2_2", "task3_1", "task3_2")
#: Tasks whose answer is a set of options (every dissenter), not one option.
MULTI = ("task3_2",)
#: Option labels: numbers, so no label is ever a participant's name (A-D; test_questions checks it).
LABELS = ("1", "2", "3", "4", "5", "6", "7", "8")

TITLES = {
    "task1": "Task 1: subject-level mental state",
    "task2_1": "Task 2.1: addressee identification",
    "task2_2": "Task 2.2: attitude inference",
    "task3_1": "Task 3.1: consensus classification",
    "task3_2": "Task 3.2: dissenter identification",
}

#: Task 1's seven mental states (paper 3.2, appendix A's one-line glosses; in full in the Task-CoT template).
STATES = {
    "active_engagement": ("Active Engagement", "actively leading or driving the discussion"),
    "supportive_endorsement": ("Supportive Endorsement", "showing agreement or validation"),
    "focused_listening": ("Focused Listening", "attentive but neutral reception"),
    "cognitive_conflict": ("Cognitive Conflict", "experiencing disagreement or skepticism"),
    "confused_bewilderment": ("Confused Bewilderment", "exhibiting confusion or uncertainty about the content"),
    "hesitation": ("Hesitation", "pausing before responding or acting"),
    "disengaged_withdrawal": ("Disengaged Withdrawal", "showing low engagement or attention drift"),
}
#: Task 2.2: the addressee's attitude toward the speaker's statement (the paper names no set; ours).
ATTITUDES = {
    "positive": ("Positive", "agrees with or supports the statement"),
    "negative": ("Negative", "disagrees with or objects to the statement"),
    "neutral": ("Neutral", "acknowledges the statement without taking a stance"),
    "uncertain": ("Uncertain", "is unsure or hesitant about the statement"),
}
#: Task 3.1 (paper 3.2 and the issue: genuine consensus, pseudo-consensus, no consensus).
CONSENSUS = {
    "genuine_consensus": ("Genuine consensus", "the participants agree, in what they say and in how they behave"),
    "pseudo_consensus": (
        "Pseudo-consensus",
        "the participants agree verbally, but someone's behaviour shows reservation or disagreement",
    ),
    "no_consensus": ("No consensus", "the group does not reach agreement"),
}
VOCABULARY = {"task1": STATES, "task2_2": ATTITUDES, "task3_1": CONSENSUS}

QUESTIONS = {
    "task1": Template("What is participant $target's mental state in this $duration-second clip?"),
    "task2_1": Template(
        'In this meeting clip ($duration s long), participant $speaker says "you" at $you_time s, in the utterance: '
        '"$utterance"\nWhom is participant $speaker addressing with this "you"?'
    ),
    "task2_2": Template(
        'In this meeting clip ($duration s long), participant $speaker addresses participant $addressee with "you" at '
        '$you_time s, in the utterance: "$utterance"\nWhat attitude does participant $addressee hold toward '
        "participant $speaker's statement?"
    ),
    "task3_1": Template(
        "In this meeting clip ($duration s long), a proposal is put to the group between $moment_start s and"
        " $moment_end s.\nDoes the group reach a genuine consensus, a pseudo-consensus or no consensus on it?"
    ),
    "task3_2": Template(
        "In this meeting clip ($duration s long), the group reaches a pseudo-consensus between $moment_start s and "
        "$moment_end s: everyone agrees verbally, but some participants show reservation or disagreement.\n"
        "Which participants are the dissenters? Choose every one of them."
    ),
}


def question(task: str, variables: Mapping[str, Any]) -> str:
    """The task's question with its variables filled in (a missing variable is a KeyError)."""
    return QUESTIONS[task].substitute({k: (f"{v:.1f}" if isinstance(v, float) else v) for k, v in variables.items()})


def shuffled(values: Sequence[str], seed: int, iid: str) -> list[str]:
    """``values`` in the instance's own seeded order (one instance's order never depends on another's)."""
    out = list(values)
    random.Random(f"{seed}:{iid}:options").shuffle(out)
    return out


def vocabulary_options(task: str, seed: int, iid: str) -> list[dict[str, str]]:
    """The options of a task with a fixed vocabulary (Task 1, 2.2, 3.1), each "Name: definition"."""
    vocab = VOCABULARY[task]
    return [
        {"label": LABELS[k], "value": v, "text": f"{vocab[v][0]}: {vocab[v][1]}"}
        for k, v in enumerate(shuffled(sorted(vocab), seed, iid))
    ]


def participant_options(
    participants: Sequence[str], seed: int, iid: str, exclude: Sequence[str] = ()
) -> list[dict[str, str]]:
    """Participants as options (Task 2.1's candidate addressees, Task 3.2's candidate dissenters)."""
    people = sorted(p for p in participants if p not in exclude)
    return [
        {"label": LABELS[k], "value": p, "participant": p, "text": f"Participant {p}"}
        for k, p in enumerate(shuffled(people, seed, iid))
    ]


def rotated_options(options: Sequence[Mapping[str, Any]], k: int) -> list[dict[str, Any]]:
    """Option order ``k`` (docs/decisions/answer-stability.md): the options rotated left by k, numbered again."""
    k %= max(1, len(options))
    return [{**o, "label": LABELS[i]} for i, o in enumerate([*options[k:], *options[:k]])]


def label_of(options: Sequence[Mapping[str, str]], value: str) -> str | None:
    return next((o["label"] for o in options if o["value"] == value), None)


def value_of(options: Sequence[Mapping[str, str]], label: str) -> str | None:
    return next((o["value"] for o in options if o["label"] == label), None)


def answer_format(task: str) -> str:
    """The strict JSON answer the templates ask for (the invalid-output rule: meetingtom.parsing)."""
    if task in MULTI:
        return '{"answer": ["<number>", ...]} (the numbers of every option that applies, at least one)'
    return '{"answer": "<number>"} (the number of exactly one option)'


def answer_rule(task: str, form: str) -> str:
    """The reasoning methods' closing instruction (``$answer_rule``) in answer form ``json`` or ``final_line``."""
    if form == "final_line":
        return f'Then give the final line "Final answer: " followed by {answer_format(task)}.'
    fmt = answer_format(task).replace('{"answer"', '{"reasoning": "<your reasoning>", "answer"', 1)
    return f"Give your reasoning and then your answer as one JSON object and nothing else: {fmt}."


# ---- the contextual priors in words (paper 4.2, Table 4) ----------------------------------------------
#: AMI topic types (default-topics.xml) that are a stage of their own; every other typed topic is discussion.
TOPIC_STAGES = {
    "opening": "opening",
    "closing": "closing",
    "agenda/equipment issues": "opening",
    "project specs and roles of participants": "presentation",
    "interface specialist presentation": "presentation",
    "marketing expert presentation": "presentation",
    "industrial designer presentation": "presentation",
    "presentation of prototype(s)": "presentation",
}
#: From where in the meeting discussion is the decision stage (AMI scenario meetings close by deciding).
DECISION_FROM = 2 / 3
#: Without a typed topic: the first and last tenth of the meeting are its opening and closing.
EDGE = 0.1


def meeting_stage(topic: str | None, position: float | None) -> str | None:
    """A clip's stage from its AMI topic type and its position in the meeting (None when unknown)."""
    if topic in TOPIC_STAGES:
        return TOPIC_STAGES[topic]
    if position is None:
        return "discussion" if topic else None
    if topic is None and position < EDGE:
        return "opening"
    if topic is None and position >= 1 - EDGE:
        return "closing"
    return "decision" if position >= DECISION_FROM else "discussion"


#: AMI dialogue-act codes in words (the glosses of ontologies/da-types.xml), as the prior shows them.
DIALOGUE_ACTS = {
    "bck": "backchannel",
    "stl": "stall",
    "fra": "fragment",
    "inf": "inform",
    "sug": "suggest",
    "ass": "assess",
    "el.inf": "elicit inform",
    "el.sug": "elicit offer or suggestion",
    "el.ass": "elicit assessment",
    "el.und": "elicit comment on understanding",
    "off": "offer",
    "und": "comment about understanding",
    "be.pos": "be positive",
    "be.neg": "be negative",
    "oth": "other",
}


def act_words(code: str | None) -> str:
    """A dialogue act as words (an unknown code shown as it is; none: "no act")."""
    return "no act" if code is None else DIALOGUE_ACTS.get(code, code)
