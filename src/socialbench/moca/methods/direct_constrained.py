"""Direct inference with constrained decoding: D.1's prompt, but the answer schema lists the allowed
values as enums (guided decoding where the backend has it), so a scenario-invalid value cannot be
produced. A variant, not the paper's setting (which is JSON mode): its rows read
"<model> + direct_constrained". Its templates are a copy of direct's (tests/moca/test_prompts.py
checks they are the same), so the two differ in decoding only."""

from __future__ import annotations

from socialbench.moca.methods.direct import DirectMethod


class DirectConstrainedMethod(DirectMethod):
    constrained = True


METHOD = DirectConstrainedMethod
