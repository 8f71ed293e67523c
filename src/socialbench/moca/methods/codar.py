"""CoDAR (MoCA section 5, appendices C.2-C.3, D.2): six role-conditioned stages with a consistency
check and revision loop. The chain logic is in socialbench.moca.eval.codar; prompts in templates/codar/.
Its Table 5 ablations are variant runs ``codar__<ablation>`` (params ``moca.ablations``), not modules."""

from __future__ import annotations

from socialbench.moca.eval.codar import CodarMethod


class Codar(CodarMethod):
    pass


METHOD = Codar
