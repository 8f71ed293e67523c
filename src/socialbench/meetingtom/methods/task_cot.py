"""Task-CoT (MeetingToM 4.2, "task-aligned CoT"): reasoning steps specific to the task's level
(subject, dyadic, group), one guidance template per task, then a ``Final answer:`` line."""

from socialbench.meetingtom.methods import AnsweringMethod, guidance_templates


class TaskCoTMethod(AnsweringMethod):
    templates = ("system.txt", "user.txt", *guidance_templates())
    reasons = True
    task_guidance = True


METHOD = TaskCoTMethod
