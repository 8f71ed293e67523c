"""A reproducible, stratified sample of a benchmark's instances (params ``<benchmark>.subset``), to check a
model, prompt or cost before the full run. Each stratum gets ``n * size / total`` instances rounded down,
the rest going to the largest remainders (ties: the name); within it, the smallest ``sha256("<seed>:<id>")``
are taken, whatever the file's order. Requests are the full run's own, so it finds their calls cached. Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from socialbench.core.hashing import sha256_bytes


@dataclass(frozen=True)
class SubsetInfo:
    """What a subset run ran: ``n`` asked, ``seed``, ``total``, ``taken``, ``strata`` (name -> [taken, of])."""

    n: int
    seed: int
    total: int
    taken: int
    by: str
    strata: dict[str, list[int]] = field(default_factory=dict)

    @property
    def whole(self) -> bool:
        """n at least the data's size: every instance runs."""
        return self.taken == self.total

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def note(self) -> str:
        """The line printed under every table of a subset run."""
        by = f", stratified by {self.by}" if self.by else ""
        if self.whole:
            return (
                f"Subset run (params subset n={self.n}, seed {self.seed}{by}): n is not smaller than the data,"
                f" so all {self.total} instances ran."
            )
        return (
            f"Subset run: {self.taken} of {self.total} instances (params subset n={self.n}, seed {self.seed}{by});"
            " these are not full-run numbers."
        )


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Per stratum, its share of ``n`` (see the module docstring); never more than it holds."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    base = {s: n * k // total for s, k in sizes.items()}
    left = n - sum(base.values())
    # remainders compared exactly, as fractions of total: n * k mod total
    order = sorted(sizes, key=lambda s: (-(n * sizes[s] % total), s))
    for s in order[:left]:
        base[s] += 1
    return base


def rank(seed: int, instance_id: str) -> str:
    """The draw order within a stratum (a hash: independent of the file's order)."""
    return sha256_bytes(f"{seed}:{instance_id}".encode())


def stratified_subset(
    instances: Sequence[dict[str, Any]], n: int, seed: int, stratum: Callable[[dict[str, Any]], str], by: str = ""
) -> tuple[list[dict[str, Any]], SubsetInfo]:
    """The subset of ``instances`` (in their order) and what it is. ``n`` >= 1."""
    if n < 1:
        raise ValueError(f"subset n must be at least 1, got {n}")
    groups: dict[str, list[dict[str, Any]]] = {}
    for inst in instances:
        groups.setdefault(str(stratum(inst)), []).append(inst)
    counts = allocate({s: len(g) for s, g in groups.items()}, n)
    chosen: set[str] = set()
    for s, group in groups.items():
        ranked = sorted(group, key=lambda i: rank(seed, str(i["id"])))
        chosen.update(str(i["id"]) for i in ranked[: counts[s]])
    out = [i for i in instances if str(i["id"]) in chosen]
    strata = {s: [counts[s], len(groups[s])] for s in sorted(groups)}
    return out, SubsetInfo(n=n, seed=seed, total=len(instances), taken=len(out), by=by, strata=strata)
