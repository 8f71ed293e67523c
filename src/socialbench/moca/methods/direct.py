"""Direct inference (MoCA appendix D.1): one call per instance, answered as a JSON object in JSON mode
(keys required by the prompt, values free strings: an invalid value is possible and scored invalid,
as in the paper). Each field is scored on its own; the answer-format policy (retries, extra keys, code
fences) is params ``moca.answer``, the same as every MoCA method's, and the run's summary counts what
it changed. An instance whose media cannot be shown is answered without a call (scored invalid)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from socialbench.core.backend import Request
from socialbench.core.benchmarks import Exchange, Final, Method
from socialbench.moca.eval.prompts import answer_summary, direct_step


class DirectMethod(Method):
    templates = ("system.txt", "user.txt", "retry.txt")

    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        return direct_step(self, instance, rounds, constrained=False)

    def summary(self, finals: list[Final]) -> dict[str, float]:
        return answer_summary(finals)


METHOD = DirectMethod
