"""A MoCA answering call's answer (D.1's JSON, read field by field under params ``moca.answer``), one
rule for every method that ends in a direct answer."""

from __future__ import annotations

from typing import Any

from socialbench.core.benchmarks import Exchange, Final, Method
from socialbench.moca.eval.parsing import read_answer
from socialbench.moca.eval.prompts import Order, answer_format, answer_settings


def final_answer(instance: dict[str, Any], ex: Exchange, method: Method) -> Final:
    """The answer of ``instance`` from exchange ``ex`` under ``method``'s settings (``moca.answer``)."""
    tax = method.benchmark.taxonomy
    options = answer_settings(method.settings)
    order = Order.of(method.settings)
    s = instance["scenario"]
    maps = ex.request.shown["slots"]
    shown = order.record(instance, tax)
    resp = ex.response
    policy = options["code_fence"], options["extra_keys"]
    a = read_answer(resp.text, tax.mechanism_names(s), tax.label_names(s), maps, *policy)
    cut = "answer truncated at max_tokens: " if resp.truncated and a.record_error else ""
    record_error = a.record_error and cut + a.record_error
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
