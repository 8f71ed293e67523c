"""A MoCA answering call's answer (appendix D.1's JSON, read field by field), one rule for every method
that ends in a direct answer: the four fields parsed under the answer-format policy (params
``moca.answer``), mapped back from the slot ids the request showed (``Request.shown["slots"]``), with
the call's bookkeeping."""

from __future__ import annotations

from typing import Any

from socialbench.core.benchmarks import Exchange, Final, Method
from socialbench.moca.eval.parsing import read_answer
from socialbench.moca.eval.prompts import Order, answer_format, answer_settings


def final_answer(instance: dict[str, Any], ex: Exchange, method: Method) -> Final:
    """The answer of ``instance`` from its answering exchange ``ex`` under ``method``'s settings (its
    ``answer`` policy, its option order). ``error`` is set only when the answer as a whole could not be
    used (the call failed, or a format failure); ``format`` says what the answer-format policy did
    (``repairs``: what changed the answer; ``ignored_keys``). An order run's record keeps the order
    (``Order.record``)."""
    tax = method.benchmark.taxonomy
    options = answer_settings(method.settings)
    order = Order.of(method.settings)
    s = instance["scenario"]
    maps = ex.request.shown["slots"]
    shown = order.record(instance, tax)
    resp = ex.response
    a = read_answer(
        resp.text, tax.mechanism_names(s), tax.label_names(s), maps, options["code_fence"], options["extra_keys"]
    )
    record_error = a.record_error
    if resp.truncated and record_error:
        record_error = f"answer truncated at max_tokens: {record_error}"
    return Final(
        fields={
            "raw": resp.text,
            **a.fields,
            "field_errors": a.field_errors,
            "slots": maps,
            **({"order": shown} if shown else {}),
            "request_key": ex.key,
            "inputs": [{"sha256": p.sha256, "timestamp": p.timestamp} for p in ex.request.images()],
            "finish_reason": resp.finish_reason,
            "format": answer_format(repairs=["code_fence"] * a.fence_removed, ignored_keys=a.extra_keys),
        },
        error=resp.error or record_error,
    )
