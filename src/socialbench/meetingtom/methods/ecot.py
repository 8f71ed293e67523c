"""ECoT (MeetingToM 4.2, Emotional Chain-of-Thought [37]): reasoning about what the participants
feel, why, and how it shapes what they do, then a ``Final answer:`` line."""

from socialbench.meetingtom.methods import AnsweringMethod


class ECoTMethod(AnsweringMethod):
    reasons = True


METHOD = ECoTMethod
