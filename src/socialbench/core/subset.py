"""A reproducible, stratified sample of a benchmark's instances (params ``<benchmark>.subset``).

A subset run answers a sample first, to check a model, a prompt or a cost before the full run. The
sample is stratified by the benchmark's stratum of an instance (``Benchmark.subset_stratum``, e.g. its
task family), so each stratum keeps its share of the data:

* each stratum gets ``n * size / total`` instances, rounded down, and the instances left over go to
  the strata with the largest remainders (ties: the stratum name), so the counts sum to ``n``;
* within a stratum, the instances with the smallest ``sha256("<seed>:<id>")`` are taken.

The choice of an instance depends only on the seed, its id and the sizes of the strata, never on the
order of the file, and the chosen instances keep their order. Their requests are the full run's own
(requests do not depend on which other instances run), so the full run afterwards finds every call of
the subset in the request cache. A subset of n at least the data's size is the whole data
(:attr:`SubsetInfo.whole` says so). Pure: instances in, instances out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from socialbench.core.hashing import sha256_bytes


@dataclass(frozen=True)
class SubsetInfo:
    """What a subset run ran: ``n`` asked, ``seed``, the ``total`` instances in the data, those
    ``taken`` and per stratum (``strata``: name -> [taken, of]); ``by`` names the stratum."""

    n: int
    seed: int
    total: int
    taken: int
    by: str
    strata: dict[str, list[int]] = field(default_factory=dict)

    @property
    def whole(self) -> bool:
        """The subset is the whole data (n at least its size): every instance runs."""
        return self.taken == self.total

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "seed": self.seed,
            "total": self.total,
            "taken": self.taken,
            "by": self.by,
            "strata": {k: list(v) for k, v in self.strata.items()},
        }

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
    """Per stratum, how many of ``n`` it gets: proportional to its size, rounded down, the rest to the
    largest remainders (ties: the stratum name); never more than the stratum holds."""
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
    """The order instances are drawn in within a stratum (a hash: independent of the file's order)."""
    return sha256_bytes(f"{seed}:{instance_id}".encode())


def stratified_subset(
    instances: Sequence[dict[str, Any]],
    n: int,
    seed: int,
    stratum: Callable[[dict[str, Any]], str],
    by: str = "",
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
