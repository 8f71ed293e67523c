"""Direct inference (MoCA appendix D.1): one call per instance, answered as a JSON object."""

from __future__ import annotations

from typing import Any, Sequence

from socialbench.backends.base import Request
from socialbench.benchmark import Exchange, Final, Method
from socialbench.moca.parsing import parse_answer
from socialbench.moca.prompts import build_direct_request


class DirectMethod(Method):
    templates = ("system.txt", "user.txt")

    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        tax = self.benchmark.taxonomy
        if not rounds:
            request, _ = build_direct_request(instance, tax, self.spec, self.seed,
                                              (self.template("system.txt"), self.template("user.txt")))
            return [request]
        (ex,) = rounds[0]
        return self.benchmark.final_answer(instance, ex, self.seed)


METHOD = DirectMethod
