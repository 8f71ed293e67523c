"""Direct inference (MoCA appendix D.1): one call per instance, answered as a JSON object in JSON mode
(keys required by the prompt, values free strings: an invalid value is possible and scored invalid,
as in the paper). An instance whose media cannot be shown is answered without a call (scored invalid)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from socialbench.core.backend import Request
from socialbench.core.benchmarks import Exchange, Final, Method
from socialbench.moca.eval.prompts import direct_step


class DirectMethod(Method):
    templates = ("system.txt", "user.txt")

    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        return direct_step(self, instance, rounds, constrained=False)


METHOD = DirectMethod
