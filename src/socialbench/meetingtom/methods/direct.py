"""Direct answering (MeetingToM 4.1, "No Prompt"): one call per instance, the answer a JSON object
with the option letter. An instance whose clip is missing where its modality needs video is
answered without a call (scored invalid)."""

from __future__ import annotations

from typing import Any, Sequence

from socialbench.backends.base import Request
from socialbench.benchmark import Exchange, Final, InstanceInputError, Method


class DirectMethod(Method):
    templates = ("system.txt", "task2_1.txt")

    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        from socialbench.meetingtom.prompts import build_request, settings_of

        settings_of(self.settings)  # a bad setting stops the run before any call
        if not rounds:
            if instance["modality"] != "utterances" and instance.get("media_error"):
                return self.benchmark.no_call_answer(instance, instance["media_error"])
            templates = (self.template("system.txt"), self.template(f"{instance['task']}.txt"))
            try:
                return [build_request(instance, templates, self.spec, self.settings, self.name)]
            except InstanceInputError as exc:
                return self.benchmark.no_call_answer(instance, exc.message)
        (ex,) = rounds[0]
        return self.benchmark.final_answer(instance, ex)


METHOD = DirectMethod
