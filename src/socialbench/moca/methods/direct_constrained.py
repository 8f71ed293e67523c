"""Direct inference with constrained decoding: D.1's prompt, but the answer schema lists the allowed
values as enums (guided decoding where the backend has it), so a scenario-invalid value cannot be
produced. A variant, not the paper's setting (which is JSON mode): its rows read
"<model> + direct_constrained". Its templates are a copy of direct's (tests/moca/test_prompts.py
checks they are the same), so the two differ in decoding only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from socialbench.core.backend import Request
from socialbench.core.benchmarks import Exchange, Final, Method
from socialbench.moca.eval.prompts import answer_summary, direct_step


class DirectConstrainedMethod(Method):
    templates = ("system.txt", "user.txt", "retry.txt")

    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        return direct_step(self, instance, rounds, constrained=True)

    def summary(self, finals: list[Final]) -> dict[str, float]:
        return answer_summary(finals)


METHOD = DirectConstrainedMethod
