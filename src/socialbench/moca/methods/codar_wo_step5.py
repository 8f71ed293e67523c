"""CoDAR without Step 5 (MoCA Table 5, "w/o Step 5"): no consistency verification, hence no
revision. The decoder's first answer is the output (a scenario-invalid value is scored invalid, as
in the direct method). Every template is CoDAR's (templates/codar/)."""

from __future__ import annotations

from socialbench.moca.eval.codar import STAGES, CodarMethod, Variant

VARIANT = Variant(STAGES[:-1])


class CodarWithoutStep5(CodarMethod):
    variant = VARIANT
    templates = VARIANT.templates()


METHOD = CodarWithoutStep5
