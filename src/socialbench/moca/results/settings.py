"""``moca.tables`` of params, read and checked once for every table and figure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from socialbench.core.errors import ConfigError
from socialbench.core.run_name import RunName
from socialbench.moca.results.tables import CODAR

#: The ``table`` of the ablations (params ``moca.ablations``) that are Table 5's rows after full CoDAR.
TABLE5 = "table5"


@dataclass(frozen=True)
class TableSettings:
    """``<benchmark>.tables`` of params, checked against ``models``."""

    human: str | None = None
    scaling: tuple[str, str] | None = None
    backbones: tuple[str, ...] = ()
    #: Table 5's backbone (the paper's: one); None: the first model with codar and ablation rows.
    ablation_backbone: str | None = None
    resamples: int = 2000
    alpha: float = 0.05
    seed: int = 0
    #: Table 5's variant runs after full CoDAR, in params order: (run ``codar__<ablation>``, row label).
    ablations: tuple[tuple[str, str], ...] = ()
    #: Figure 6's plotted baselines as (group, models), a panel each; empty: every direct row but the human's.
    figure6: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Figure 7's models (the paper: the affect-specialized ones and the strongest proprietary one) and scenario.
    figure7: tuple[str, ...] = ()
    figure7_scenario: str = "affection"

    @classmethod
    def from_params(cls, params: dict[str, Any], section: str = "moca") -> TableSettings:
        t = (params.get(section) or {}).get("tables") or {}
        models = params.get("models") or {}
        known = ", ".join(models) or "none"
        human, scaling, backbones = t.get("human"), t.get("scaling"), list(t.get("backbones") or [])
        groups = {g: list(ms) for g, ms in (t.get("figure6") or {}).items()}
        fig7 = t.get("figure7") or {}
        ablation_backbone = t.get("ablation_backbone")
        named = [("human", [human] if human else []), ("scaling", scaling or []), ("backbones", backbones)]
        named.append(("ablation_backbone", [ablation_backbone] if ablation_backbone else []))
        named += [(f"figure6.{g}", ms) for g, ms in groups.items()] + [("figure7.models", fig7.get("models") or [])]
        plotted = [m for ms in groups.values() for m in ms]
        twice = sorted({m for m in plotted if plotted.count(m) > 1})
        if twice:
            raise ConfigError(f"{section}.tables.figure6: {', '.join(twice)} in more than one group (one panel each)")
        for key, names in named:
            for name in names:
                if name not in models:
                    raise ConfigError(f"{section}.tables.{key}: {name!r} is not a model under models: (known: {known})")
                if key != "human" and name == human:
                    why = f"{name!r} is the human model ({section}.tables.human), not a model to compare"
                    raise ConfigError(f"{section}.tables.{key}: {why}")
        if scaling and scaling[0] == scaling[1]:
            raise ConfigError(f"{section}.tables.scaling: two different models are needed, got {scaling[0]!r} twice")
        entries = ((params.get(section) or {}).get("ablations") or {}).items()
        return cls(
            human=human,
            scaling=tuple(scaling) if scaling else None,
            backbones=tuple(backbones),
            ablation_backbone=ablation_backbone,
            resamples=int(t.get("resamples", 2000)),
            alpha=float(t.get("alpha", 0.05)),
            seed=int(params.get("seed", 0)),
            ablations=tuple((str(RunName(CODAR, n)), e["label"]) for n, e in entries if e.get("table") == TABLE5),
            figure6=tuple((g, tuple(ms)) for g, ms in groups.items()),
            figure7=tuple(fig7.get("models") or ()),
            figure7_scenario=str(fig7.get("scenario", "affection")),
        )
