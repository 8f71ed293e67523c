"""The one-call answering methods of MeetingToM (paper 4.2, G.1): No Prompt, Naive-CoT, Task-CoT and ECoT
differ only in their templates (``templates/<method>/``) and in where the answer sits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from socialbench.core.backend import Request
from socialbench.core.benchmarks import Exchange, Final, InstanceInputError, Method
from socialbench.core.run_name import RunName
from socialbench.meetingtom.eval.answers import final_answer, no_call_answer, not_evaluated_answer
from socialbench.meetingtom.eval.prompts import build_request, modality_of, settings_of
from socialbench.meetingtom.schema.methods import BASE_TEMPLATES
from socialbench.meetingtom.schema.questions import label_of, rotated_options

#: Why Task 1 has no score with contextual priors (paper Table 4: "Task 1 is not evaluated in this setting").
NOT_EVALUATED_PRIORS = "Task 1 is not evaluated with contextual priors (MeetingToM Table 4, n=0)"
#: Why a run with video has no score on a source without media (the real corpus as shared: no video).
NOT_EVALUATED_NO_VIDEO = "not evaluated: no video in this source"


class AnsweringMethod(Method):
    """One call per instance; subclasses set the class attributes only."""

    templates: ClassVar[tuple[str, ...]] = BASE_TEMPLATES
    #: The response reasons before its answer (the ``answer_form`` setting says in which form).
    reasons: ClassVar[bool] = False
    #: One guidance template per task (``<task>.txt``), filled with the task's variables (Task-CoT).
    task_guidance: ClassVar[bool] = False

    def step(self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]]) -> list[Request] | Final:
        s = settings_of(self.settings)  # a bad setting stops the run before any call
        order = int(self.settings.get("order") or 0)  # an order run's (params meetingtom.robustness)
        if order:
            return self.ordered_step(instance, rounds, order)
        return self.paper_step(instance, rounds, s, self.name)

    def paper_step(
        self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]], s: dict[str, Any], asked_as: str
    ) -> list[Request] | Final:
        """The step of ``instance`` as it is given; its request carries run name ``asked_as``."""
        if not rounds:
            if instance["task"] == "task1" and s["priors"]:
                return not_evaluated_answer(instance, NOT_EVALUATED_PRIORS)
            if modality_of(instance, s) != "utterances" and instance["modality"] == "utterances":
                # the source has no media (its instances are utterances only): nothing to show, no call
                return not_evaluated_answer(instance, NOT_EVALUATED_NO_VIDEO)
            if modality_of(instance, s) != "utterances" and instance.get("media_error"):
                return no_call_answer(instance, instance["media_error"])
            templates = (
                self.template("system.txt"),
                self.template("user.txt"),
                self.template(f"{instance['task']}.txt") if self.task_guidance else None,
            )
            try:
                return [build_request(instance, templates, self.spec, self.settings, asked_as, reasons=self.reasons)]
            except InstanceInputError as exc:
                return no_call_answer(instance, exc.message)
        (ex,) = rounds[0]
        return final_answer(instance, ex, self)

    def ordered_step(
        self, instance: dict[str, Any], rounds: Sequence[Sequence[Exchange]], k: int
    ) -> list[Request] | Final:
        """An order run's step: the options in order ``k`` (``rotated_options``), the answer mapped back to the
        instance's labels; fewer distinct orders repeat an earlier order's request (the cache answers it)."""
        distinct = max(1, len(instance["options"]))
        shown = k % distinct
        view = {**instance, "options": rotated_options(instance["options"], shown)}
        out = self.paper_step(view, rounds, settings_of(self.settings), str(RunName.parse(self.name).with_order(shown)))
        if not isinstance(out, Final):
            return out
        f = out.fields
        answered = f.get("answer")
        if answered is not None:  # back to the instance's own labels, through the options' values
            back = {o["label"]: label_of(instance["options"], o["value"]) for o in view["options"]}
            f["answer"] = [back[a] for a in answered] if isinstance(answered, list) else back[answered]
        f["order"] = {"index": k, "shown": shown, "distinct": distinct, "answer_shown": answered}
        return out
