"""ECoT (MeetingToM 4.2, Emotional Chain-of-Thought, Li et al. 2024): ECoT's five emotional-intelligence
steps from an observer's side, then the answer (docs/decisions.md, "ECoT prompt")."""

from socialbench.meetingtom.methods import AnsweringMethod


class ECoTMethod(AnsweringMethod):
    reasons = True


METHOD = ECoTMethod
