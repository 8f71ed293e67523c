"""Backends that need no weights: the chance row and the majority prior.

They read the structured ``task`` of a request (options and slot ids), not its prose, and answer
with the same JSON an LLM would give, so their output goes through the same parser and scorer.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from socialbench.backends.base import Backend, Request, Response


def _answer(mechanism: str, label: str, subject: str, target: str) -> str:
    return json.dumps({"mechanism": mechanism, "label": label, "subject": subject, "target": target})


class RandomBackend(Backend):
    """Seeded uniform choice over the scenario's valid options and the slot ids: the chance row."""

    def _rng(self, request: Request) -> random.Random:
        return random.Random(f"{self.context.seed}:{self.spec.name}:{request.request_id}")

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "seed": self.context.seed}

    def complete(self, request: Request) -> Response:
        t = request.task
        rng = self._rng(request)
        return Response(
            text=_answer(
                rng.choice([m["name"] for m in t["mechanisms"]]),
                rng.choice([lab["name"] for lab in t["labels"]]),
                rng.choice(sorted(t["subject_slots"])),
                rng.choice(sorted(t["target_slots"])),
            )
        )


def majority(values: list[str], order: list[str]) -> str:
    """Most frequent value; ties go to the option listed first in the taxonomy."""
    counts = Counter(values)
    return max(order, key=lambda v: (counts.get(v, 0), -order.index(v)))


class PriorBackend(RandomBackend):
    """Most frequent mechanism and label per scenario on the dev split; seeded slot choice."""

    def __init__(self, spec, context=None):
        super().__init__(spec, context)
        dev = self.context.dev_instances
        if not dev:
            from socialbench.errors import ConfigError

            if dev is None:
                raise ConfigError(f"models.{spec.name}: the prior backend needs the dev split (--dev)")
            raise ConfigError(f"models.{spec.name}: the prior backend needs dev instances, but the dev split has no records")
        self._by_scenario: dict[str, dict[str, list[str]]] = {}
        for inst in dev:
            d = self._by_scenario.setdefault(inst["scenario"], {"mechanism": [], "label": []})
            d["mechanism"].append(inst["mechanism"])
            d["label"].append(inst["label"])

    def priors(self, task: dict[str, Any]) -> tuple[str, str]:
        seen = self._by_scenario.get(task["scenario"], {"mechanism": [], "label": []})
        mechs = [m["name"] for m in task["mechanisms"]]
        labels = [lab["name"] for lab in task["labels"]]
        return majority(seen["mechanism"], mechs), majority(seen["label"], labels)

    def identity(self) -> dict[str, Any]:
        table = {s: {k: sorted(Counter(v).items()) for k, v in d.items()} for s, d in sorted(self._by_scenario.items())}
        return {**super().identity(), "dev_counts": table}

    def complete(self, request: Request) -> Response:
        t = request.task
        mech, label = self.priors(t)
        rng = self._rng(request)
        return Response(text=_answer(mech, label, rng.choice(sorted(t["subject_slots"])), rng.choice(sorted(t["target_slots"]))))
