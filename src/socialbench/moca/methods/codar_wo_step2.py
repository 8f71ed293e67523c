"""CoDAR without Step 2 (MoCA Table 5, "w/o Step 2"): no social context construction. The query
formulator, the retrieval step and the context synthesizer are not run; the conflict analyst forms
its expectation from the text, the explicit perception and general social knowledge, and the checker
has no social-context check (breakpoints 1, 3, 4). Its own templates are in
templates/codar_wo_step2/; the others are CoDAR's (templates/codar/)."""

from __future__ import annotations

from socialbench.moca.eval.codar import CodarMethod, Variant

VARIANT = Variant(("observer", "conflict", "decoder", "checker"))


class CodarWithoutStep2(CodarMethod):
    variant = VARIANT
    templates = VARIANT.templates()
    own_templates = frozenset(
        {"conflict.system.txt", "conflict.user.txt", "decoder.user.txt", "checker.system.txt", "checker.user.txt"}
    )


METHOD = CodarWithoutStep2
