"""ECoT (MeetingToM 4.2, Emotional Chain-of-Thought [37], Li et al. 2024): the five steps ECoT
publishes after Goleman's emotional intelligence (understanding the context, recognizing others'
emotions, recognizing one's own, managing them, influencing others'), read from an observer's side
with the question's participant(s) as the subject, then the answer (docs/decisions.md, departures
"ECoT prompt")."""

from socialbench.meetingtom.methods import AnsweringMethod


class ECoTMethod(AnsweringMethod):
    reasons = True


METHOD = ECoTMethod
