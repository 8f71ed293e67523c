"""Direct inference (MoCA appendix D.1): one call per instance, answered in JSON mode (values free
strings: an invalid value is scored invalid, as in the paper), read under params ``moca.answer``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from string import Template
from typing import Any, ClassVar

from socialbench.core.backend import Request
from socialbench.core.benchmarks import Exchange, Final, Method
from socialbench.moca.eval.answers import final_answer
from socialbench.moca.eval.prompts import (
    MediaUnavailable,
    Order,
    answer_format,
    answer_settings,
    answer_summary,
    build_direct_request,
    media_error_answer,
)
from socialbench.moca.schema.methods import direct_settings


class DirectMethod(Method):
    templates = ("system.txt", "user.txt", "retry.txt")
    #: The answer schema lists the allowed values as enums (the ``direct_constrained`` variant).
    constrained: ClassVar[bool] = False

    @classmethod
    def check_settings(cls, run: str, settings: dict[str, Any]) -> dict[str, Any]:
        return direct_settings(run, settings)

    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        """One answering call, then the parsed answer; a failed answer is asked again up to ``retries`` times."""
        options = answer_settings(self.settings)  # checked before the first call, not after it
        additions = self.check_settings(self.name, self.settings)["prompt_additions"]  # D.1's text, or with additions
        order = Order.of(self.settings)  # an order run's option order (params moca.robustness)
        tax = self.benchmark.taxonomy

        def request(note: str | None = None) -> Request:
            templates = (self.template("system.txt"), self.template("user.txt"))
            how = {"method": order.asked_as(self.name, instance, tax), "constrained": self.constrained, "order": order}
            req, _ = build_direct_request(instance, tax, self.spec, self.seed, templates, additions=additions, **how)
            if note is None:
                return req
            system, user = req.messages
            *media, text = user.content
            user = replace(user, content=(*media, text + "\n" + note))
            return replace(req, request_id=f"{req.request_id}.retry{len(rounds)}", messages=(system, user))

        if not rounds:
            try:
                return [request()]
            except MediaUnavailable as exc:
                return media_error_answer(instance, exc.message, self.seed, order.index, order.record(instance, tax))
        (ex,) = rounds[-1]
        final = final_answer(instance, ex, self)
        retries = len(rounds) - 1
        if final.error and ex.response.error is None and retries < options["retries"]:
            note = Template(self.template("retry.txt")).substitute(reason=final.error).rstrip()
            return [request(note)]
        fmt = final.fields["format"]
        repairs = fmt["repairs"] + (["retry"] if retries and not final.error else [])
        final.fields["format"] = answer_format(retries, repairs, fmt["ignored_keys"])
        return final

    def call_bounds(self, instance: dict[str, Any], first: Sequence[Request]) -> tuple[int, int]:
        """One call, and at most ``retries`` more for an answer that fails as a whole."""
        return 1, 1 + answer_settings(self.settings)["retries"]

    def summary(self, finals: list[Final]) -> dict[str, float]:
        return answer_summary(finals)


METHOD = DirectMethod
