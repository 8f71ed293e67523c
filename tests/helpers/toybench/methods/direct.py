"""One call: the answer."""

from socialbench.core.backend import Decoding, Message, Request
from socialbench.core.benchmarks import Method


class Direct(Method):
    templates = ("prompt.txt",)

    def step(self, instance, rounds):
        if rounds:
            return self.benchmark.final(rounds[0][0], instance)
        text = self.template("prompt.txt").format(question=instance["question"], options=", ".join(instance["options"]))
        return [
            Request(
                f"{instance['id']}/direct/answer",
                (Message("user", (text,)),),
                self.benchmark.answer_task(instance, "answer"),
                Decoding(max_tokens=self.spec.max_tokens),
            )
        ]


METHOD = Direct
