"""The paper's Figures 6, 7 and 9 from ``PaperTables``: which rows each draws (params ``moca.tables``)
and the numbers behind each as CSV. Pure; the drawing is ``socialbench.moca.results.figures``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from socialbench.moca.results import figures
from socialbench.moca.results.completion import human_label
from socialbench.moca.results.grids import grid
from socialbench.moca.results.paper import PaperTables
from socialbench.moca.results.significance import TABLES_2_4
from socialbench.moca.results.tables import CODAR, COLUMNS, DIRECT, HEADER
from socialbench.results.numbers import difference, mean
from socialbench.results.tables import Num, Table, formats

#: Figure 9's metrics (the paper's gain profile).
GAIN_METRICS = ("dyad", "faith", "holis")
#: Figure 6d's metric (the paper: Holistic Alignment across the scenarios).
FIG6D_METRIC = "holis"
DATA_COLUMNS = ["bar", "value", "low", "high", "scenario", "metric", "model"]
#: Figures 6 and 7's metrics: the columns of Tables 2-4, by heading and by key.
HEADS, KEYS = [head for head, _ in COLUMNS], [key for _, key in COLUMNS]


def bar(paper: PaperTables, model: str, scenario: str, keys: Sequence[str], label: str | None = None) -> dict[str, Any]:
    """A direct row's values over ``keys`` with their 95% intervals: {label, values, lows, highs}."""
    return {"label": label or model, **_with_intervals([paper.cell(model, DIRECT, scenario, k) for k in keys])}


def _with_intervals(cells: Sequence[Any]) -> dict[str, Any]:
    return {"values": [c.value for c in cells], "lows": [c.low for c in cells], "highs": [c.high for c in cells]}


def human_reference(paper: PaperTables, scenarios: Sequence[str], key: str | None = None) -> dict[str, Any] | None:
    """The human row ({label, values}): over COLUMNS in one scenario, or over ``scenarios`` on ``key``."""
    if paper.human is None:
        return None
    sc = paper.scores[(paper.human, DIRECT)]
    if key is None:
        if scenarios[0] not in sc:
            return None
        values = [paper.value(paper.human, DIRECT, scenarios[0], k) for _, k in COLUMNS]
    else:
        values = [paper.value(paper.human, DIRECT, s, key) for s in scenarios]
    return {"label": human_label(paper.human), "values": values}


def figure6_groups(paper: PaperTables) -> list[tuple[str | None, list[str]]]:
    """(group, models) of Figure 6: params' groups, or one unnamed group of every direct row but the human's."""
    if paper.settings.figure6:
        return [(g, list(ms)) for g, ms in paper.settings.figure6]
    seen: list[str] = []
    for s in paper.scenarios:
        seen += [m for _, m, meth in paper.rows(s) if meth == DIRECT and m != paper.settings.human and m not in seen]
    return [(None, seen)]


def _not_run(paper: PaperTables, models: Sequence[str], entry: str) -> str | None:
    missing = [m for m in models if not paper.has(m, DIRECT)]
    return f"no direct row: {', '.join(missing)} ({entry})" if missing else None


def _notes(*parts: str | None) -> str | None:
    return "; ".join(p for p in parts if p) or None


def figure6(paper: PaperTables) -> tuple[dict[str, str | bytes], list[dict[str, Any]]]:
    """Figures 6a-c (one per scenario) and 6d, and the rows of fig6.csv."""
    out: dict[str, str | bytes] = {}
    rows: list[dict[str, Any]] = []
    groups = figure6_groups(paper)
    declared = bool(paper.settings.figure6)
    missing = _not_run(paper, [m for _, ms in groups for m in ms], "moca.tables.figure6") if declared else None
    no_human = None if paper.human else "no human reference: name the human model in moca.tables.human"
    for s in paper.scenarios:
        panels = [
            (g, [bar(paper, m, s, KEYS) for m in ms if s in paper.scores.get((m, DIRECT), {})]) for g, ms in groups
        ]
        human = human_reference(paper, [s])
        n = next((sc[s]["n"] for sc in paper.scores.values() if s in sc), None)
        if declared:
            title = s.capitalize() + (f" (N = {n})" if n else "")
            drawn = figures.metric_panels(title, HEADS, panels, human, _notes(no_human, missing))
        else:  # one panel: the figure as before params named groups
            drawn = figures.metric_comparison(s, HEADS, panels[0][1], human, n, no_human)
        for ext, data in drawn.items():
            out[f"figures/fig6_{s}.{ext}"] = data
        for _, bars in panels:
            for b in bars:
                rows += _data_rows(b, s, HEADS, "value", "model")
        if human:
            rows += _data_rows(human, s, HEADS, "value", "model")
    # 6d: the same models' Holis across the scenarios (the paper: the gap is widest in Stance)
    names = [s.capitalize() for s in paper.scenarios]

    def across(m: str) -> dict[str, Any]:  # a model's direct Holis in each scenario, with the intervals
        return {"label": m, **_with_intervals([paper.cell(m, DIRECT, s, FIG6D_METRIC) for s in paper.scenarios])}

    panels = [(g or "", [across(m) for m in ms if paper.has(m, DIRECT)]) for g, ms in groups]
    human = human_reference(paper, paper.scenarios, FIG6D_METRIC) if paper.scenarios else None
    title = f"{HEADER[FIG6D_METRIC]} across the scenarios"
    note = _notes(no_human, missing, None if paper.scenarios else "no scores")
    for ext, data in figures.metric_panels(title, names, panels, human, note).items():
        out[f"figures/fig6d_holis.{ext}"] = data
    return out, rows


def figure7(paper: PaperTables) -> tuple[dict[str, str | bytes], list[dict[str, Any]]]:
    """Figure 7: params' models in params' scenario, seven metrics, with the human reference."""
    s = paper.settings.figure7_scenario
    models = list(paper.settings.figure7)
    bars = [bar(paper, m, s, KEYS) for m in models if s in paper.scores.get((m, DIRECT), {})]
    human = human_reference(paper, [s])
    n = next((sc[s]["n"] for sc in paper.scores.values() if s in sc), None)
    note = _notes(
        None if models else "no models: name them in moca.tables.figure7.models",
        _not_run(paper, models, "moca.tables.figure7.models"),
    )
    out = {
        f"figures/fig7.{ext}": data for ext, data in figures.metric_comparison(s, HEADS, bars, human, n, note).items()
    }
    rows = [r for b in bars + ([human] if human else []) for r in _data_rows(b, s, HEADS, "value", "model")]
    return out, rows


def figure9_bars(paper: PaperTables, scenario: str) -> list[dict[str, Any]]:
    """Each backbone's CoDAR gain on Dyad, Faith and Holis, with the paired bootstrap interval."""
    bars = []
    for b in paper.codar_backbones():
        cs = [paper.comparison(TABLES_2_4, (b, CODAR), scenario, key) for key in GAIN_METRICS]
        bars.append(
            {
                "label": b,
                "values": [gain(paper, b, scenario, k) for k in GAIN_METRICS],
                "lows": [c.low if c else None for c in cs],
                "highs": [c.high if c else None for c in cs],
            }
        )
    return bars


def gain(paper: PaperTables, backbone: str, scenario: str, key: str) -> float | None:
    """CoDAR minus direct of the printed values (the tables' change)."""
    return difference(paper.value(backbone, CODAR, scenario, key), paper.value(backbone, DIRECT, scenario, key))


def figure9_means(paper: PaperTables) -> Table:
    """The means Figure 9 draws, per scenario and over all (backbone, scenario) pairs."""
    backbones = paper.codar_backbones()
    cols = ["Scenario", *(f"Δ{HEADER[k]}" for k in GAIN_METRICS)]
    rows: list[list[Any]] = []
    if backbones and paper.scenarios:
        for s in paper.scenarios:
            rows.append([s, *(Num(mean(gain(paper, b, s, k) for b in backbones), signed=True) for k in GAIN_METRICS)])
        pairs = [(b, s) for s in paper.scenarios for b in backbones]
        overall = (Num(mean(gain(paper, b, s, k) for b, s in pairs), signed=True) for k in GAIN_METRICS)
        rows.append([f"all ({len(pairs)} pairs)", *overall])
        how = "moca.tables.backbones" if paper.settings.backbones else "every model with a direct and a codar row"
        notes = [f"Backbones: {', '.join(backbones)} ({how})."]
    else:
        notes = ["No rows: no backbone has both a direct and a codar row; add codar to moca.methods."]
    title = "Figure 9: mean CoDAR gain over the backbones (points)"
    caption = "Mean CoDAR gain over the backbones, in points (the diamonds of Figure 9)."
    return grid("fig9_means", title, caption, cols, 1, rows, notes)


def figure9(paper: PaperTables) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    gains = [HEADER[k] for k in GAIN_METRICS]
    panels = [(s, figure9_bars(paper, s)) for s in paper.scenarios]
    means_table = figure9_means(paper)
    by_scenario = {row.cells[0]: [c.value for c in row.cells[1:]] for row in means_table.blocks[0].rows}
    means = [by_scenario.get(s, [None] * len(gains)) for s, _ in panels]
    note = None if any(bars for _, bars in panels) else "No CoDAR rows: add codar to moca.methods"
    out: dict[str, Any] = {
        f"figures/fig9_gains.{ext}": data for ext, data in figures.gain_profiles(panels, gains, note, means).items()
    }
    out.update(formats("figures/fig9_means", means_table, ("md", "csv")))
    rows = [r for s, bars in panels for b in bars for r in _data_rows(b, s, gains, "gain", "backbone")]
    return out, rows


def _data_rows(b: dict[str, Any], scenario: str, metrics: Sequence[str], value_key: str, who: str) -> list[dict]:
    lows, highs = b.get("lows") or [None] * len(metrics), b.get("highs") or [None] * len(metrics)
    return [
        {
            "bar": f"{scenario} | {m} | {b['label']}",
            value_key: v,
            "low": lo,
            "high": hi,
            "scenario": scenario,
            "metric": m,
            who: b["label"],
        }
        for m, v, lo, hi in zip(metrics, b["values"], lows, highs)
    ]


def paper_figures(paper: PaperTables) -> dict[str, Any]:
    """Figures 6a-d, 7 and 9 with their data and Figure 9's means (``figures.output_files`` lists them)."""
    (fig6, rows6), (fig7, rows7), (fig9, rows9) = figure6(paper), figure7(paper), figure9(paper)
    out: dict[str, Any] = {**fig6, **fig7, **fig9}
    out["figures/fig6.csv"] = figures.data_csv(rows6, DATA_COLUMNS)
    out["figures/fig7.csv"] = figures.data_csv(rows7, DATA_COLUMNS)
    out["figures/fig9.csv"] = figures.data_csv(rows9, ["bar", "gain", "low", "high", "scenario", "metric", "backbone"])
    return out
