"""A MeetingToM instance's answer, one rule for every method (paper 4.2): the option label(s) parsed
from the answering call (``eval.parsing``), or an answer made without a call (media that cannot be shown,
an instance the run's setting does not evaluate)."""

from __future__ import annotations

from typing import Any

from socialbench.core.benchmarks import Exchange, Final, Method
from socialbench.meetingtom.eval.parsing import parse_final
from socialbench.meetingtom.schema.questions import MULTI


def final_answer(instance: dict[str, Any], ex: Exchange, method: Method) -> Final:
    """The answer of ``instance`` from its answering exchange (one rule for every method)."""
    resp = ex.response
    if resp.finish_reason == "no_record":
        return not_evaluated_answer(instance, f"not covered by the recorded answers: {resp.error}")
    labels = [o["label"] for o in instance["options"]]
    parsed = parse_final(resp.text, labels, multi=instance["task"] in MULTI)
    error = parsed["error"]
    if resp.truncated and error:
        error = f"answer truncated at max_tokens: {error}"
    return Final(
        fields={
            "raw": resp.text,
            "answer": parsed["answer"],
            "value": value_of_answer(instance, parsed["answer"]),
            "note": parsed["note"],
            "reasoning": parsed["reasoning"],
            "request_key": ex.key,
            "inputs": [{"sha256": p.sha256, "timestamp": p.timestamp, "view": p.view} for p in ex.request.images()],
            "finish_reason": resp.finish_reason,
        },
        error=resp.error or error,
        trace={"reasoning": parsed["reasoning"]} if ex.request.shown["reasons"] else {},
    )


#: The fields of an answer made without a call: nothing parsed, nothing sent (``inputs``: a fresh [] each).
_NO_CALL_FIELDS = dict.fromkeys(
    ("raw", "answer", "value", "note", "reasoning", "request_key", "inputs", "finish_reason")
)


def no_call_answer(instance: dict[str, Any], problem: str) -> Final:
    """The answer of an instance that cannot be shown to the model: no call, scored invalid."""
    return Final(fields={**_NO_CALL_FIELDS, "inputs": [], "media_error": problem}, error=f"media: {problem}")


def not_evaluated_answer(instance: dict[str, Any], reason: str) -> Final:
    """An instance the setting does not evaluate (Task 1 with priors): no call, left out of scoring."""
    return Final(fields={**_NO_CALL_FIELDS, "inputs": [], "not_evaluated": reason}, error=None)


def value_of_answer(instance: dict[str, Any], answer: Any) -> Any:
    """The option value(s) of an answer (Task 3.2: the sorted letters chosen); None for no answer."""
    if answer is None:
        return None
    by_label = {o["label"]: o["value"] for o in instance["options"]}
    return sorted(by_label[a] for a in answer) if isinstance(answer, list) else by_label.get(answer)
