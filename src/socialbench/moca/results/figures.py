"""The paper's figures from the tables' numbers (matplotlib, Agg; pure): Figure 6/7 style metric bars with 95% intervals
against the human reference, and Figure 9 style gain profiles. The same numbers give the same PNG and PDF bytes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from socialbench.results.tables import SIGNED, csv_text, drawn, new_figure

_BAR_STYLE = {"capsize": 1.5, "error_kw": {"elinewidth": 0.6, "capthick": 0.6}}


def _errors(values: Sequence[float | None], lows: Sequence[float | None], highs: Sequence[float | None]):
    """matplotlib's asymmetric yerr, zero where a bound is unknown."""
    below = [0.0 if v is None or lo is None else max(0.0, v - lo) for v, lo in zip(values, lows)]
    above = [0.0 if v is None or hi is None else max(0.0, hi - v) for v, hi in zip(values, highs)]
    return [below, above]


def _nan(values: Sequence[float | None]) -> list[float]:
    return [float("nan") if v is None else float(v) for v in values]


def _bars(ax, metrics, bars, first_colour: int = 0) -> None:
    """Grouped bars ({label, values, lows?, highs?} over ``metrics``) with their intervals."""
    width = 0.8 / max(1, len(bars))
    for i, bar in enumerate(bars):
        x = [j - 0.4 + width * (i + 0.5) for j in range(len(metrics))]
        values = bar["values"]
        yerr = _errors(values, bar.get("lows") or [None] * len(values), bar.get("highs") or [None] * len(values))
        heights, colour = [0 if v is None else v for v in values], f"C{(first_colour + i) % 10}"
        ax.bar(x, heights, width, yerr=yerr, label=bar["label"], color=colour, **_BAR_STYLE)
        _mark_undefined(ax, x, values)


def _draw_bars(ax, metrics, bars, human, first_colour: int = 0) -> None:
    """Grouped bars with their intervals and the human line over each group of ``ax``."""
    _bars(ax, metrics, bars, first_colour)
    if human is not None:
        for j, v in enumerate(human["values"]):
            if v is not None:
                ax.hlines(
                    v, j - 0.45, j + 0.45, colors="black", linewidth=1.6, label=human["label"] if j == 0 else None
                )
    ax.set_xticks(range(len(metrics)), metrics)
    ax.set_ylim(0, 102)  # a human line at 100 stays visible


@drawn
def metric_comparison(
    scenario: str,
    metrics: Sequence[str],
    bars: list[dict[str, Any]],
    human: dict[str, Any] | None,
    n: int | None = None,
    note: str | None = None,
):
    """Figure 6 style for one scenario: ``bars`` over ``metrics``, the ``human`` reference as black lines."""
    fig = new_figure(7.2, 3.4)
    ax = fig.add_subplot()
    _draw_bars(ax, metrics, bars, human)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"{scenario.capitalize()}" + (f" (N = {n})" if n else "") + (f"\n{note}" if note else ""))
    if bars or human is not None:
        k = max(1, len(bars))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=min(5, k + (human is not None)), frameon=False)
    return fig


@drawn
def metric_panels(
    title: str,
    metrics: Sequence[str],
    panels: list[tuple[str, list[dict[str, Any]]]],
    human: dict[str, Any] | None,
    note: str | None = None,
):
    """Figure 6 with one panel per group of baselines on one scale, each with the human reference."""
    fig = new_figure(7.2 if len(panels) < 3 else 3.6 * len(panels), 3.6)
    axes = fig.subplots(1, max(1, len(panels)), sharey=True, squeeze=False)[0]
    first = 0
    for ax, (name, bars) in zip(axes, panels):
        _draw_bars(ax, metrics, bars, human, first)
        first += len(bars)  # a model keeps its own colour across the panels
        ax.set_title(name)
        if bars or human is not None:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, frameon=False)
    axes[0].set_ylabel("accuracy (%)")
    fig.suptitle(title + (f"\n{note}" if note else ""))
    return fig


def _mark_undefined(ax, x: Sequence[float], values: Sequence[float | None]) -> None:
    """An undefined value (a ratio with denominator 0) is labelled, not drawn as a zero."""
    for xi, v in zip(x, values):
        if v is None:
            ax.text(xi, 0.5, "n/a", rotation=90, ha="center", va="bottom", fontsize=6)


def _any_nonzero(bars: list[dict[str, Any]], means: Sequence[float | None]) -> bool:
    """Whether anything a gain panel draws (bars, their intervals, the means) is away from zero."""
    drawn = [*means, *(v for b in bars for k in ("values", "lows", "highs") for v in b.get(k) or [])]
    return any(v for v in drawn if v is not None)


@drawn
def gain_profiles(
    panels: list[tuple[str, list[dict[str, Any]]]],
    metrics: Sequence[str],
    note: str | None = None,
    means: list[list[float | None]] | None = None,
):
    """Figure 9 style: per scenario each backbone's gain as bars, their mean (``means``) as a diamond."""
    given_means = means
    fig = new_figure(7.2, 2.8)
    axes = fig.subplots(1, max(1, len(panels)), sharey=True, squeeze=False)[0]
    for p, (ax, (scenario, bars)) in enumerate(zip(axes, panels)):
        _bars(ax, metrics, bars)
        if bars:
            means = (
                given_means[p]
                if given_means is not None
                else [
                    None if any(b["values"][j] is None for b in bars) else sum(b["values"][j] for b in bars) / len(bars)
                    for j in range(len(metrics))
                ]
            )
            ax.plot(range(len(metrics)), _nan(means), "D", color="black", markersize=4, label="mean", zorder=3)
        ax.axhline(0, color="grey", linewidth=0.6)
        if not _any_nonzero(bars, means if bars else []):
            # every gain 0 or undefined: a zero-height view would put the "n/a" marks at infinite height
            ax.set_ylim(-1, 1)
        ax.set_xticks(range(len(metrics)), metrics)
        ax.set_title(scenario.capitalize())
    axes[0].set_ylabel("CoDAR gain (points)")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=min(6, len(handles)), frameon=False)
    if note:
        fig.suptitle(note)
    return fig


def output_files(scenarios: Sequence[str]) -> list[str]:
    """The figure files of the tables stage (``figures/``): PNG and PDF, and the numbers behind them."""
    names = [*(f"fig6_{s}" for s in scenarios), "fig6d_holis", "fig7", "fig9_gains"]
    data = ["fig6.csv", "fig7.csv", "fig9.csv", "fig9_means.md", "fig9_means.csv"]
    return [f"figures/{n}.{ext}" for n in names for ext in ("png", "pdf")] + [f"figures/{d}" for d in data]


def data_csv(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    """A figure's data in long format for ``dvc plots`` (a ``bar`` label per row, values with two decimals)."""

    def cell(v: Any) -> Any:
        return SIGNED.csv(v) if v is None or isinstance(v, float) else v

    return csv_text(columns, ([cell(r.get(c)) for c in columns] for r in rows))
