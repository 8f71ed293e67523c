"""Naive-CoT (MeetingToM 4.2): generic step-by-step reasoning, then a ``Final answer:`` line; the
reasoning is kept in the prediction and the trace."""

from socialbench.meetingtom.methods import AnsweringMethod


class NaiveCoTMethod(AnsweringMethod):
    reasons = True


METHOD = NaiveCoTMethod
