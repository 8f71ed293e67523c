"""Answer stability under option order (params ``<benchmark>.robustness``; docs/decisions/answer-stability.md), pure. A
cell's input: ``correct`` ``(K, N, C)`` booleans, ``answers`` (K lists of N resolved answers) and ``distinct``, each
instance's number of distinct orders. Statistics in percent of N: per-order accuracy, circular accuracy, agreement and
the order-0 minus circular gap, with instance-bootstrap 95% intervals."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from socialbench.results import numbers
from socialbench.results.stats import DEFAULT_RESAMPLES, Interval, cell_seed, percentile_interval, resample_counts
from socialbench.results.tables import Block, Num, NumStyle, Table, grouped

LEVEL = 0.95


#: One statistic of a cell, in percent, and its interval (``None`` when there is no instance).
Stat = Interval


@dataclass(frozen=True)
class Stability:
    """A cell's statistics: ``orders`` the main column's accuracy under each order,
    ``mean``/``low_order``/``high_order`` over them; ``circular`` per column; ``agreement``; ``gap`` = order 0 -
    circular (points); ``n`` instances, ``fewer`` of which have fewer distinct orders than K."""

    orders: list[Stat]
    mean: Stat
    low_order: Stat
    high_order: Stat
    circular: dict[str, Stat]
    agreement: Stat
    gap: Stat
    n: int
    fewer: int


def effective(correct: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """``correct`` (K, N, C) with each instance's repeated orders replaced by the orders they repeat (k mod count)."""
    k_all = correct.shape[0]
    idx = np.arange(k_all)[:, None] % np.maximum(distinct, 1)[None, :]  # (K, N)
    return np.take_along_axis(correct, idx[:, :, None], axis=0)


def circular(correct: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """(N, C): correct under every distinct order of the instance (at most K of them)."""
    return effective(correct, distinct).all(axis=0)


def agreement(answers: Sequence[Sequence[Hashable]], distinct: np.ndarray) -> np.ndarray:
    """(N,): the resolved answer is the same under every distinct order (no answer counts as "none")."""
    k_all = len(answers)
    n = len(answers[0]) if answers else 0
    out = np.ones(n, dtype=bool)
    for i in range(n):
        seen = {_hashable(answers[k][i]) for k in range(min(k_all, max(int(distinct[i]), 1)))}
        out[i] = len(seen) == 1
    return out


def answer_codes(answers: Iterable[Any]) -> np.ndarray:
    """(N,) 16-byte BLAKE2b codes of resolved answers' canonical JSON, so the tables compare answers across orders
    without keeping them. Equal answers (lists and tuples alike, dicts in any key order) give equal codes."""
    return np.array(
        [
            hashlib.blake2b(
                json.dumps(a, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8"), digest_size=16
            ).digest()
            for a in answers
        ],
        dtype="S16",
    )


def _hashable(value: Any) -> Hashable:
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


def _stat(count: int, n: int, resampled: np.ndarray) -> Stat:
    low, high, _ = percentile_interval(resampled, LEVEL)
    return Stat(numbers.percent(count, n), low, high)


def _exact_stat(exact: Fraction | None, resampled: np.ndarray) -> Stat:
    if exact is None:
        return Stat(None, None, None)
    low, high, _ = percentile_interval(resampled, LEVEL)
    return Stat(numbers.half_up(exact), low, high)


def stability(
    correct: Any,
    answers: Sequence[Sequence[Hashable]],
    distinct: Any,
    columns: Sequence[str],
    main: str,
    *,
    seed: int,
    key: Sequence[Any],
    n_resamples: int = DEFAULT_RESAMPLES,
) -> Stability:
    """The statistics of one cell (module docstring) for the ``main`` column; ``key`` seeds its resamples."""
    c = np.asarray(correct, dtype=bool)
    d = np.asarray(distinct, dtype=int)
    if c.ndim != 3 or c.shape[2] != len(columns):
        raise ValueError(f"correctness must be (orders, instances, {len(columns)}), got {c.shape}")
    k_all, n, _ = c.shape
    if k_all < 2 or len(answers) != k_all or any(len(a) != n for a in answers) or d.shape != (n,):
        raise ValueError("stability needs at least 2 orders, and K answers and one distinct count per instance")
    j = list(columns).index(main)
    eff = effective(c, d).astype(float)  # (K, N, C)
    circ = eff.all(axis=0) if n else np.zeros((0, len(columns)), dtype=bool)
    agree = agreement(answers, d).astype(float)
    if n == 0:
        none = Stat(None, None, None)
        return Stability([none] * k_all, none, none, none, dict.fromkeys(columns, none), none, none, 0, 0)
    w = resample_counts(n, n_resamples, cell_seed(seed, *key))  # (B, N)
    per_order = 100 * (w @ eff[:, :, j].T) / n  # (B, K)
    circ_r = 100 * (w @ circ.astype(float)) / n  # (B, C)
    counts = eff[:, :, j].sum(axis=1).astype(int)  # (K,)
    orders = [_stat(int(counts[k]), n, per_order[:, k]) for k in range(k_all)]
    exact = [Fraction(100 * int(counts[k]), n) for k in range(k_all)]  # exact: rounded once, when printed
    circ_counts = circ.sum(axis=0).astype(int)
    return Stability(
        orders=orders,
        mean=_exact_stat(sum(exact) / k_all, per_order.mean(axis=1)),
        low_order=_exact_stat(min(exact), per_order.min(axis=1)),
        high_order=_exact_stat(max(exact), per_order.max(axis=1)),
        circular={col: _stat(int(circ_counts[m]), n, circ_r[:, m]) for m, col in enumerate(columns)},
        agreement=_stat(int(agree.sum()), n, 100 * (w @ agree) / n),
        gap=_exact_stat(exact[0] - Fraction(100 * int(circ_counts[j]), n), per_order[:, 0] - circ_r[:, j]),
        n=n,
        fewer=int((d < k_all).sum()),
    )


def _num(s: Stat, *, signed: bool = False) -> Num:
    return Num(s.point, signed=signed).with_ci(s.low, s.high)


#: The long format's columns after a benchmark's group columns (each benchmark names its own): one line
#: per statistic of a cell, as the paper tables' CSVs (value, its 95% interval, the n it stands on).
CSV_COLUMNS = ("model", "run", "metric", "value", "ci_low", "ci_high", "n")


def metric_name(heading: str) -> str:
    """A column heading as a metric name of the long format ("Circular Accuracy": ``circular_accuracy``)."""
    return "_".join(heading.lower().split())


def cell_lines(st: Stability, columns: Sequence[tuple[str, str]], main: str) -> list[tuple[str, Stat]]:
    """(metric, statistic) of one cell in the long format's order: ``main`` under each of the K orders,
    its mean, min and max, each column's circular accuracy, the agreement and the gap."""
    m = metric_name(main)
    return [
        *((f"{m}_order_{k}", o) for k, o in enumerate(st.orders)),
        (f"{m}_mean", st.mean),
        (f"{m}_min", st.low_order),
        (f"{m}_max", st.high_order),
        *((metric_name(f"circular {h}"), st.circular[c]) for c, h in columns),
        ("agreement", st.agreement),
        ("gap", st.gap),
    ]


def csv_lines(
    cells: dict[tuple[str, str, str], Stability],
    groups: Sequence[tuple[str, str]],
    columns: Sequence[tuple[str, str]],
    main: str,
    group_key: Callable[[str], Sequence[Any]],
) -> list[list[Any]]:
    """The long format: one line per statistic of each cell, group by group (``groups``' order), a
    group named by ``group_key(group)`` (each benchmark names its own), then the model and run."""
    out = []
    for key, _ in groups:
        for (model, run, group), st in cells.items():
            if group != key:
                continue
            for metric, stat in cell_lines(st, columns, main):
                values = ("" if v is None else v for v in (stat.point, stat.low, stat.high))
                out.append([*group_key(group), model, run, metric, *values, st.n])
    return out


def stability_table(
    title: str,
    cells: dict[tuple[str, str, str], Stability],
    groups: Sequence[tuple[str, str]],
    columns: Sequence[tuple[str, str]],
    main: str,
    *,
    style: NumStyle,
    label: str,
    group_columns: Sequence[str],
    group_key: Callable[[str], Sequence[Any]],
    notes: Sequence[str] = (),
    empty: str = "(no runs)",
) -> Table:
    """The stability table: a block per group (``groups``: (key, heading)), a row per (model, run) with N and
    each statistic with its 95% interval. Its CSV is the long format: ``group_columns``, ``CSV_COLUMNS``."""
    heads = ["Model", "Run", "N", *(f"{main} {s}" for s in ("order 0", "mean", "min", "max"))]
    heads += [*(f"Circular {h}" for _, h in columns), "Agreement", "Gap (order 0 - circular)"]
    blocks = []
    for key, heading in groups:
        rows = []
        for (model, run, group), st in cells.items():
            if group != key:
                continue
            stats = [st.mean, st.low_order, st.high_order, *(st.circular[c] for c, _ in columns), st.agreement]
            first = _num(st.orders[0]) if st.orders else Num()
            rows.append([model, run, st.n, first, *map(_num, stats), _num(st.gap, signed=True)])
        blocks.append(Block(list(heads), grouped(rows), keys=2, title=heading, empty=None if rows else empty))
    lines = csv_lines(cells, groups, columns, main, group_key)
    return Table(
        title,
        blocks,
        caption=title,
        label=label,
        notes=list(notes),
        layout="sections",
        style=style,
        csv=((*group_columns, *CSV_COLUMNS), lines),
    )
