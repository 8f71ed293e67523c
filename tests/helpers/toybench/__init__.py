"""toybench: a test-only benchmark plug-in (a test double, not a benchmark anyone evaluates).

It exists to prove that the plug-in kinds are generic: the runner, the baselines, the stage
commands and the workflow run a second benchmark without a line of core code knowing it. Its
instances are multiple-choice questions ``{"id", "question", "options", "answer"}``; its
methods are ``direct`` (one call) and ``chain`` (three rounds: notes, a check that may ask for a
revision, then the answer), so the multi-round runner has a deterministic chain to drive.
"""
