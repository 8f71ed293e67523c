"""Statistics beyond the paper: pure functions on per-instance correctness (docs/decisions/statistics.md).

A benchmark's :class:`MetricSet` defines each metric as a count of a per-instance 0/1 indicator over N
(a mean) or over another indicator's count (a ratio, ``None`` when that is 0). A cell's input is a boolean
matrix ``(n_instances, columns)``, optionally with an ``invalid`` column, or a dict ``{column: array}``.
Results are in percent; resamples come from ``resample_counts`` (PCG64 from the seed: the same inputs and
seed give bit-identical results), a cell's seed from its key (``cell_seed``)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from socialbench.results.numbers import half_up

INVALID = "invalid"
INVALID_RATE = "invalid_rate"
DEFAULT_RESAMPLES = 2000

Correctness = np.ndarray | Sequence[Sequence[bool]] | Mapping[str, Any]
Seed = int | np.random.SeedSequence | None


@dataclass(frozen=True)
class MetricSet:
    """A benchmark's metrics: ``columns`` in matrix order; ``derived`` indicators, each the conjunction of the columns
    it names; ``metrics``: metric -> (numerator, denominator or ``None`` for N), in output order. ``invalid_rate`` comes
    last when a cell has an ``invalid`` column."""

    columns: tuple[str, ...]
    metrics: Mapping[str, tuple[str, str | None]]
    derived: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.columns or len(set(self.columns)) != len(self.columns) or INVALID in self.columns:
            raise ValueError(f"columns must be distinct names other than {INVALID!r}, got {self.columns!r}")
        for name, parts in self.derived.items():
            if name in self.columns or not parts or set(parts) - set(self.columns):
                raise ValueError(f"derived indicator {name!r}: must be a new name over columns {self.columns!r}")
        known = {*self.columns, *self.derived}
        for metric, (num, den) in self.metrics.items():
            if metric == INVALID_RATE or num not in known or (den is not None and den not in known):
                raise ValueError(f"metric {metric!r}: numerator and denominator must be among {sorted(known)}")

    @property
    def ratios(self) -> tuple[str, ...]:
        """The metrics with a denominator other than N (undefined when it is 0)."""
        return tuple(m for m, (_, den) in self.metrics.items() if den is not None)

    def definition(self, metric: str) -> tuple[str, str | None]:
        """(numerator, denominator) indicators of ``metric`` (``invalid_rate`` included)."""
        if metric == INVALID_RATE:
            return INVALID, None
        if metric not in self.metrics:
            raise ValueError(f"unknown metric {metric!r} (one of {', '.join([*self.metrics, INVALID_RATE])})")
        return self.metrics[metric]

    def names(self, has_invalid: bool) -> list[str]:
        """The metrics a cell gets, in order."""
        return [*self.metrics, *([INVALID_RATE] if has_invalid else [])]


class Interval(NamedTuple):
    """A metric's point estimate and percentile interval, in percent (all ``None`` when undefined)."""

    point: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class CellCI(Mapping[str, Interval]):
    """``bootstrap_ci``'s result, metric -> ``Interval``; ``undefined``: resamples left out per metric."""

    intervals: dict[str, Interval]
    undefined: dict[str, int]
    n: int
    n_resamples: int
    level: float

    def __getitem__(self, metric: str) -> Interval:
        return self.intervals[metric]

    def __iter__(self) -> Iterator[str]:
        return iter(self.intervals)

    def __len__(self) -> int:
        return len(self.intervals)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: {metric: {point, low, high, undefined}, n, n_resamples, level}."""
        out: dict[str, Any] = {m: {**iv._asdict(), "undefined": self.undefined[m]} for m, iv in self.intervals.items()}
        out.update(n=self.n, n_resamples=self.n_resamples, level=self.level)
        return out


class McNemar(NamedTuple):
    """Exact McNemar test: ``a_only`` instances right in a only, ``b_only`` right in b only."""

    pvalue: float
    a_only: int
    b_only: int


class PairedTest(NamedTuple):
    """Paired bootstrap of metric(a) - metric(b) in percentage points (``None`` where undefined)."""

    diff: float | None
    low: float | None
    high: float | None
    pvalue: float | None
    n_resamples: int
    undefined: int  # resamples where the difference was undefined (a ratio's denominator 0)


class Holm(NamedTuple):
    adjusted: np.ndarray  # float, Holm-adjusted p-values in input order (monotone in p, capped at 1)
    reject: np.ndarray  # bool, rejected at alpha by Holm's step-down procedure


def _as_matrix(correct: Correctness, defs: MetricSet) -> tuple[np.ndarray, bool]:
    """(n, columns [+ 1]) bool matrix in the set's column (+ invalid) order, and whether the invalid column is there."""
    cols_ = defs.columns
    if isinstance(correct, Mapping):
        missing = [k for k in cols_ if k not in correct]
        unknown = sorted(set(correct) - {*cols_, INVALID})
        if missing or unknown:
            raise ValueError(
                f"correctness dict needs keys {', '.join(cols_)} (optionally {INVALID}); "
                f"missing: {missing}, unknown: {unknown}"
            )
        keys = [*cols_, INVALID] if INVALID in correct else list(cols_)
        cols = [np.asarray(correct[k]) for k in keys]
        if any(c.ndim != 1 for c in cols) or len({c.shape[0] for c in cols}) != 1:
            raise ValueError("correctness dict values must be 1-D arrays of one length")
        arr = np.stack(cols, axis=1)
    else:
        arr = np.asarray(correct)
        if arr.ndim != 2 or arr.shape[1] not in (len(cols_), len(cols_) + 1):
            raise ValueError(
                f"correctness matrix must have shape (n_instances, {len(cols_)} or {len(cols_) + 1}), got {arr.shape}"
            )
    if arr.dtype != bool:
        if arr.dtype.kind not in "iu" or not np.isin(arr, (0, 1)).all():
            raise ValueError("correctness must be boolean (or 0/1 integers)")
        arr = arr.astype(bool)
    if arr.shape[0] == 0:
        raise ValueError("no instances (a cell needs at least one)")
    return arr, arr.shape[1] == len(cols_) + 1


def _indicators(m: np.ndarray, has_invalid: bool, defs: MetricSet) -> tuple[list[str], np.ndarray]:
    """Per-instance 0/1 columns every metric is a sum (or ratio of sums) of."""
    cols = {name: m[:, k] for k, name in enumerate(defs.columns)}
    for name, parts in defs.derived.items():
        cols[name] = np.logical_and.reduce([cols[p] for p in parts])
    if has_invalid:
        cols[INVALID] = m[:, len(defs.columns)]
    return list(cols), np.stack(list(cols.values()), axis=1).astype(np.float64)


def per_instance(correct: Correctness, metric: str, *, defs: MetricSet) -> np.ndarray:
    """Per-instance correctness of a mean metric (not a ratio or invalid_rate): the input of ``mcnemar_exact``."""
    m, has_invalid = _as_matrix(correct, defs)
    names, ind = _indicators(m, has_invalid, defs)
    means = [k for k, (_, den) in defs.metrics.items() if den is None]
    if metric not in means:
        raise ValueError(f"no per-instance correctness for {metric!r} (one of {', '.join(means)})")
    return ind[:, names.index(defs.metrics[metric][0])].astype(bool)


def metric_counts(correct: Correctness, *, defs: MetricSet) -> dict[str, tuple[int, int]]:
    """metric -> (numerator, denominator) over all instances (the point estimates' counts)."""
    m, has_invalid = _as_matrix(correct, defs)
    names, ind = _indicators(m, has_invalid, defs)
    sums = ind.sum(axis=0)
    n = m.shape[0]
    out = {}
    for metric in defs.names(has_invalid):
        num, den = defs.definition(metric)
        out[metric] = (int(sums[names.index(num)]), n if den is None else int(sums[names.index(den)]))
    return out


def _round(x: float | Fraction | None, decimals: int | None) -> float | None:
    if x is None:
        return None
    return float(x) if decimals is None else half_up(x, decimals)


def _check_common(n_resamples: int, level: float) -> None:
    if not isinstance(n_resamples, (int, np.integer)) or isinstance(n_resamples, bool) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")


def resample_counts(n: int, n_resamples: int, seed: Seed) -> np.ndarray:
    """(n_resamples, n): how often each instance is drawn in each resample, for e.g. a Macro-F1."""
    return _resample_counts(np.random.default_rng(seed), n, n_resamples)


def _resample_counts(rng: np.random.Generator, n: int, n_resamples: int) -> np.ndarray:
    idx = rng.integers(0, n, size=(n_resamples, n))
    flat = (idx + (np.arange(n_resamples) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=n_resamples * n).reshape(n_resamples, n).astype(np.float64)


def _percentiles(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column-wise percentile interval of (B, M) values ignoring NaN: (low, high, n_nan), NaN when all NaN."""
    q = [50 * (1 - level), 50 * (1 + level)]
    nan = np.isnan(values)
    n_nan = nan.sum(axis=0)
    low = np.full(values.shape[1], np.nan)
    high = np.full(values.shape[1], np.nan)
    full = n_nan == 0
    if full.any():
        low[full], high[full] = np.percentile(values[:, full], q, axis=0)
    for j in np.flatnonzero(~full & (n_nan < values.shape[0])):
        low[j], high[j] = np.percentile(values[~nan[:, j], j], q)
    return low, high, n_nan


def _nan_to_none(x: float, decimals: int | None) -> float | None:
    return None if math.isnan(x) else _round(float(x), decimals)


def bootstrap_ci(
    correct: Correctness,
    *,
    defs: MetricSet,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = 0,
    level: float = 0.95,
    decimals: int | None = 2,
) -> CellCI:
    """Instance-level percentile bootstrap intervals for every metric of one cell (undefined ratio resamples left out
    and counted), points exact, rounded half-up to ``decimals`` (``None``: unrounded)."""
    _check_common(n_resamples, level)
    m, has_invalid = _as_matrix(correct, defs)
    counts = metric_counts(m, defs=defs)
    resampled = resample_metrics([m], defs=defs, n_resamples=n_resamples, seed=seed)
    metrics = defs.names(has_invalid)
    low, high, n_nan = _percentiles(np.stack([resampled[metric][0] for metric in metrics], axis=1), level)
    intervals, undefined = {}, {}
    for j, metric in enumerate(metrics):
        num, den = counts[metric]
        point = None if den == 0 else _round(Fraction(100 * num, den), decimals)  # exact, rounded half-up
        bounds = (None, None) if point is None else (_nan_to_none(low[j], decimals), _nan_to_none(high[j], decimals))
        intervals[metric] = Interval(point, *bounds)
        undefined[metric] = int(n_nan[j])
    return CellCI(intervals, undefined, m.shape[0], int(n_resamples), float(level))


def cell_seed(seed: int, *parts: Any) -> int:
    """A cell's bootstrap seed from the master seed and its key: the first 8 bytes of
    sha256("{seed}:{part}:...:bootstrap"), independent of Python's hash and of other cells."""
    text = ":".join([str(seed), *(str(p) for p in parts), "bootstrap"])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def bootstrap_cells(
    cells: Mapping[Hashable, Correctness],
    *,
    defs: MetricSet,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
    decimals: int | None = 2,
) -> dict[Hashable, CellCI]:
    """``bootstrap_ci`` for each cell, keyed as ``cells``, resampled with ``cell_seed(seed, *key)``."""
    out = {}
    for key, correct in cells.items():
        parts = key if isinstance(key, tuple) else (key,)
        out[key] = bootstrap_ci(
            correct, defs=defs, n_resamples=n_resamples, seed=cell_seed(seed, *parts), level=level, decimals=decimals
        )
    return out


def resample_metrics(
    systems: Sequence[Correctness], *, defs: MetricSet, n_resamples: int = DEFAULT_RESAMPLES, seed: Seed = 0
) -> dict[str, np.ndarray]:
    """Every metric of several systems on the same resamples, ``{metric: (len(systems), n_resamples)}`` in percent (NaN:
    undefined); one system and the same seed give ``bootstrap_ci``'s values."""
    _check_common(n_resamples, 0.5)
    if not systems:
        raise ValueError("no systems (resample_metrics needs at least one)")
    parsed = [_as_matrix(c, defs) for c in systems]
    n = parsed[0][0].shape[0]
    if any(m.shape[0] != n for m, _ in parsed):
        raise ValueError(
            f"systems must cover the same instances, got {sorted({m.shape[0] for m, _ in parsed})} instances"
        )
    has_invalid = all(inv for _, inv in parsed)
    metrics = defs.names(has_invalid)
    w = _resample_counts(np.random.default_rng(seed), n, n_resamples)
    out = {metric: np.empty((len(systems), n_resamples)) for metric in metrics}
    with np.errstate(invalid="ignore", divide="ignore"):
        for k, (m, inv) in enumerate(parsed):
            names, ind = _indicators(m, inv, defs)
            sums = w @ ind
            for metric in metrics:
                numer, denom = _ratio_parts(names, sums, defs.definition(metric), n)
                out[metric][k] = np.where(denom > 0, 100 * numer / denom, np.nan)
    return out


def percentile_interval(
    values: Any, level: float = 0.95, decimals: int | None = 2
) -> tuple[float | None, float | None, int]:
    """(low, high, undefined) of one statistic's resampled values; NaN left out and counted (bounds ``None``)."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"values must be a non-empty 1-D array, got shape {v.shape}")
    _check_common(1, level)
    low, high, n_nan = _percentiles(v[:, None], level)
    return _nan_to_none(low[0], decimals), _nan_to_none(high[0], decimals), int(n_nan[0])


def mcnemar_exact(a: Any, b: Any) -> McNemar:
    """Exact McNemar test of paired per-instance correctness ``a`` and ``b`` (boolean arrays over the same instances); p
    = 1 when no pair is discordant. Equals statsmodels' ``mcnemar(table, exact=True).pvalue``."""
    x, y = np.asarray(a), np.asarray(b)
    for name, v in (("a", x), ("b", y)):
        if v.ndim != 1 or (v.dtype != bool and (v.dtype.kind not in "iu" or not np.isin(v, (0, 1)).all())):
            raise ValueError(f"{name} must be a 1-D boolean (or 0/1) array")
    if x.shape != y.shape:
        raise ValueError(f"a and b must cover the same instances, got lengths {x.shape[0]} and {y.shape[0]}")
    x, y = x.astype(bool), y.astype(bool)
    a_only, b_only = int(np.sum(x & ~y)), int(np.sum(~x & y))
    d, k = a_only + b_only, min(a_only, b_only)
    tail = Fraction(sum(math.comb(d, i) for i in range(k + 1)), 2**d)
    return McNemar(float(min(Fraction(1), 2 * tail)), a_only, b_only)


def _ratio_parts(
    names: list[str], sums: np.ndarray, definition: tuple[str, str | None], n: int
) -> tuple[np.ndarray, np.ndarray]:
    num, den = definition
    numer = sums[..., names.index(num)]
    denom = np.full_like(numer, n) if den is None else sums[..., names.index(den)]
    return numer, denom


def paired_bootstrap_test(
    a: Correctness,
    b: Correctness,
    metric: str,
    *,
    defs: MetricSet,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: Seed = 0,
    level: float = 0.95,
    decimals: int | None = 2,
) -> PairedTest:
    """Paired bootstrap test of delta = metric(a) - metric(b) in points, on the same instances in order.

    Instances are resampled jointly; a resample where either ratio is undefined is counted in ``undefined`` and left
    out. Two-sided p-value by the shift method over the defined resamples, in exact integers (p = 1 when delta = 0);
    ``low``/``high`` the percentile interval of delta*. All ``None`` when delta is undefined."""
    _check_common(n_resamples, level)
    definition = defs.definition(metric)
    ma, inv_a = _as_matrix(a, defs)
    mb, inv_b = _as_matrix(b, defs)
    if ma.shape[0] != mb.shape[0]:
        raise ValueError(f"a and b must cover the same instances, got {ma.shape[0]} and {mb.shape[0]}")
    if metric == INVALID_RATE and not (inv_a and inv_b):
        raise ValueError("invalid_rate needs the invalid column in both a and b")
    n = ma.shape[0]
    names, ind_a = _indicators(ma, inv_a, defs)
    names_b, ind_b = _indicators(mb, inv_b, defs)
    pa, qa = _ratio_parts(names, ind_a.sum(axis=0), definition, n)
    pb, qb = _ratio_parts(names_b, ind_b.sum(axis=0), definition, n)
    pa, qa, pb, qb = (int(v) for v in (pa, qa, pb, qb))
    if qa == 0 or qb == 0:
        return PairedTest(None, None, None, None, int(n_resamples), int(n_resamples))
    delta = Fraction(100 * pa, qa) - Fraction(100 * pb, qb)

    rng = np.random.default_rng(seed)
    w = _resample_counts(rng, n, n_resamples)
    sa, sb = w @ ind_a, w @ ind_b
    ra, da = _ratio_parts(names, sa, definition, n)
    rb, db = _ratio_parts(names_b, sb, definition, n)
    ok = (da > 0) & (db > 0)
    ra, da, rb, db = (v[ok].astype(np.int64) for v in (ra, da, rb, db))
    undefined = int(n_resamples - ok.sum())
    # |ra/da - rb/db - (pa/qa - pb/qb)| >= |pa/qa - pb/qb|, multiplied through by da*db*qa*qb > 0.
    obj = pa * qb - pb * qa  # delta * qa * qb / 100
    if n**4 < 2**62:
        lhs = np.abs((ra * db - rb * da) * (qa * qb) - obj * (da * db))
        extreme = lhs >= abs(obj) * (da * db)
    else:  # too large for exact int64: exact Python integers
        extreme = np.array(
            [
                abs((x * v - y * u) * qa * qb - obj * u * v) >= abs(obj) * u * v
                for x, u, y, v in zip(ra.tolist(), da.tolist(), rb.tolist(), db.tolist())
            ],
            dtype=bool,
        )
    pvalue = (1 + int(extreme.sum())) / (1 + int(ok.sum()))
    deltas = 100 * ra / da - 100 * rb / db
    lo, hi, _ = percentile_interval(deltas, level, decimals) if deltas.size else (None, None, 0)
    return PairedTest(_round(delta, decimals), lo, hi, float(pvalue), int(n_resamples), undefined)


def holm(pvalues: Any, alpha: float = 0.05) -> Holm:
    """Holm-Bonferroni step-down over one family of p-values: adjusted p_(i) = min(1, max_{j<=i} (m - j +
    1) p_(j)), rejecting up to the first p_(i) > alpha / (m - i + 1); in input order, as statsmodels'
    ``multipletests(p, alpha, method="holm")``."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("pvalues must be numbers in [0, 1] (no NaN)")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    m = p.size
    order = np.argsort(p, kind="stable")
    ps = p[order]
    factors = np.arange(m, 0, -1, dtype=np.float64)
    adj_sorted = np.minimum(1.0, np.maximum.accumulate(ps * factors))
    notreject = ps > alpha / factors
    first = np.flatnonzero(notreject)
    rej_sorted = np.zeros(m, dtype=bool)
    rej_sorted[: first[0] if first.size else m] = True
    back = np.argsort(order)  # sorted position of each input
    return Holm(adj_sorted[back], rej_sorted[back])
