"""Backends that need no weights: the chance row and the majority prior. They answer a request's
``choices`` with the JSON object an LLM would give (the same parser and scorer), else an error response."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from socialbench.core.backend import Backend, Request, Response
from socialbench.core.errors import ConfigError


def choices_of(request: Request) -> list[dict[str, Any]] | None:
    choices = (request.task or {}).get("choices")
    if not isinstance(choices, list) or not choices or not all(c.get("options") for c in choices):
        return None
    return choices


def no_choices(backend: Backend, request: Request) -> Response:
    stage = (request.task or {}).get("stage", "?")
    return Response(
        text=None,
        error=f"the {backend.name} baseline answers only requests that list their answer's choices"
        f" (stage {stage!r} asks for free text)",
        finish_reason="error",
    )


class RandomBackend(Backend):
    """Seeded uniform choice over each field's valid options: the chance row."""

    # it reads only the task: takes every part, answers choices only (baselines.declaration.json)
    answers_from_code = True  # no model: this module's code is its behaviour (in the identity)

    def _rng(self, request: Request) -> random.Random:
        return random.Random(f"{self.context.seed}:{self.spec.name}:{request.request_id}")

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "seed": self.context.seed}

    def complete(self, request: Request) -> Response:
        choices = choices_of(request)
        if choices is None:
            return no_choices(self, request)
        rng = self._rng(request)
        answer = {c["field"]: rng.choice([o["value"] for o in c["options"]]) for c in choices}
        return Response(text=json.dumps(answer), finish_reason="stop")


def majority(values: list[str], order: list[str]) -> str:
    """Most frequent value; ties go to the option listed first."""
    counts = Counter(values)
    return max(order, key=lambda v: (counts.get(v, 0), -order.index(v)))


class PriorBackend(RandomBackend):
    """Per group of instances, the most frequent dev-split answer of each field the benchmark gives
    priors for (fields over a fixed set of classes); seeded chance for the other fields (slots)."""

    def __init__(self, spec, context=None):
        super().__init__(spec, context)
        dev = self.context.dev_answers
        if not dev:
            if dev is None:
                raise ConfigError(f"models.{spec.name}: the prior backend needs the dev split (--dev)")
            raise ConfigError(
                f"models.{spec.name}: the prior backend needs dev instances, but the dev split has no records"
            )
        self._by_group: dict[str, dict[str, list[str]]] = {}
        for item in dev:
            group = self._by_group.setdefault(str(item["group"]), {})
            for name, value in item["answers"].items():
                group.setdefault(name, []).append(value)

    def identity(self) -> dict[str, Any]:
        table = {
            g: {k: sorted(Counter(v).items()) for k, v in sorted(d.items())} for g, d in sorted(self._by_group.items())
        }
        return {**super().identity(), "dev_counts": table}

    def complete(self, request: Request) -> Response:
        choices = choices_of(request)
        if choices is None:
            return no_choices(self, request)
        seen = self._by_group.get(str(request.task.get("prior_group")), {})
        rng = self._rng(request)
        answer = {}
        for c in choices:
            values = [o["value"] for o in c["options"]]
            # Fields the dev split gives priors for by majority, the rest (slot ids) by seeded chance. An
            # option's ``key`` is its class when its value is only a position (options behind letters).
            keys = [str(o.get("key", o["value"])) for o in c["options"]]
            answer[c["field"]] = (
                values[keys.index(majority(seen[c["field"]], keys))] if c["field"] in seen else rng.choice(values)
            )
        return Response(text=json.dumps(answer), finish_reason="stop")
