"""Three rounds, each depending on the last answer: free-text notes; a check that answers ACCEPTED
or REJECTED (REJECTED sends the chain back to the notes once, with the check's words); then the
answer. Deterministic given the responses, as every method must be."""

from socialbench.core.backend import Decoding, Message, Request
from socialbench.core.benchmarks import Final, Method


class Chain(Method):
    templates = ("notes.txt", "check.txt", "answer.txt")

    def _ask(self, instance, stage, text, choices=False):
        task = self.benchmark.answer_task(instance, stage) if choices else {"benchmark": "toybench", "stage": stage}
        return [
            Request(
                f"{instance['id']}/chain/{stage}",
                (Message("user", (text,)),),
                task,
                Decoding(max_tokens=self.spec.max_tokens),
            )
        ]

    def step(self, instance, rounds):
        q = instance["question"]
        stages = [ex.request.task["stage"] for (ex,) in rounds]
        if not rounds:
            return self._ask(instance, "notes", self.template("notes.txt").format(question=q, revision=""))
        last = rounds[-1][0]
        if last.response.error:
            return Final(error=f"stage {stages[-1]}: {last.response.error}")
        if stages[-1] in ("notes", "notes2"):
            return self._ask(
                instance,
                "check" if stages[-1] == "notes" else "check2",
                self.template("check.txt").format(question=q, notes=last.response.text),
            )
        if stages[-1] in ("check", "check2"):
            if last.response.text.startswith("REJECTED") and stages[-1] == "check":
                return self._ask(
                    instance, "notes2", self.template("notes.txt").format(question=q, revision=last.response.text)
                )
            notes = rounds[-2][0].response.text
            return self._ask(
                instance,
                "answer",
                self.template("answer.txt").format(question=q, notes=notes, options=", ".join(instance["options"])),
                choices=True,
            )
        final = self.benchmark.final(last, instance)
        final.trace = {"stages": stages, "revised": "notes2" in stages}
        return final


METHOD = Chain
