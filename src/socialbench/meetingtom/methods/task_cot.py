"""Task-CoT (MeetingToM 4.2, "task-aligned CoT"): reasoning steps specific to the task's level
(subject, dyadic, group), one guidance template per task, then a ``Final answer:`` line."""

from socialbench.meetingtom.methods import AnsweringMethod
from socialbench.meetingtom.schema.methods import method_templates


class TaskCoTMethod(AnsweringMethod):
    templates = method_templates("task_cot")
    reasons = True
    task_guidance = True


METHOD = TaskCoTMethod
