"""Direct inference with constrained decoding: D.1's prompt with the allowed values as enums, so a
scenario-invalid value cannot be produced. A variant, not the paper's setting; its templates are a copy
of direct's (a test holds them equal)."""

from __future__ import annotations

from socialbench.moca.methods.direct import DirectMethod


class DirectConstrainedMethod(DirectMethod):
    constrained = True


METHOD = DirectConstrainedMethod
