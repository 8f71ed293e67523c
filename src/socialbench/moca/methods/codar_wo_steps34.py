"""CoDAR without Steps 3 and 4 (MoCA Table 5, "w/o Step 3&4"): no expectation-and-conflict
modelling and no abductive reasoning. The answering stage picks the four fields directly from the
explicit perception and the social context (the direct prompt's output space and keys, no substeps),
and the checker checks evidence, social context and mechanism-label consistency (breakpoints 1, 2,
4). Its own templates are in templates/codar_wo_steps34/; the others are CoDAR's."""

from __future__ import annotations

from socialbench.moca.eval.codar import CodarMethod, Variant
from socialbench.moca.eval.prompts import ANSWER_KEYS

VARIANT = Variant(("observer", "query", "context", "decoder", "checker"), decoder_keys=ANSWER_KEYS)


class CodarWithoutSteps34(CodarMethod):
    variant = VARIANT
    templates = VARIANT.templates()
    own_templates = frozenset({"decoder.system.txt", "decoder.user.txt", "checker.system.txt", "checker.user.txt"})


METHOD = CodarWithoutSteps34
