"""Dataset statistics of a MoCA benchmark in the style of the paper's Table 1, Table 11 and Figure 3:
``compute`` is pure, the renderers return Markdown, CSV, LaTeX or PNG bytes (the same instances give the
same bytes). Categories follow the taxonomy's order, empty ones included."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from socialbench.moca.dataset.annotation import TUPLE_FIELDS
from socialbench.moca.schema.normalize import percent
from socialbench.moca.schema.taxonomy import Taxonomy
from socialbench.results.tables import SIGNED, Block, Row, Table, Text, tex_escape, to_csv, to_latex, to_markdown

MODALITY_NAMES = {"image_text": "image-text", "video_text": "video-text"}


def _ordered(values: Sequence[str], known: Sequence[str]) -> list[str]:
    return list(known) + sorted(set(values) - set(known))


def compute(instances: Sequence[Mapping[str, Any]], tax: Taxonomy) -> dict[str, Any]:
    """Counts and percentages of every statistic (a plain, JSON-ready structure)."""
    n = len(instances)

    def dist(key: str, known: Sequence[str]) -> list[dict[str, Any]]:
        values = [str(i[key]) for i in instances]
        return [
            {"name": v, "count": values.count(v), "percent": percent(values.count(v), n)}
            for v in _ordered(values, known)
        ]

    scenarios = dist("scenario", tax.scenarios)
    composition = []
    for s in _ordered([i["scenario"] for i in instances], tax.scenarios):
        members = [i for i in instances if i["scenario"] == s]
        kinds = {m: sum(1 for i in members if i["modality"] == m) for m in MODALITY_NAMES}
        composition.append({"scenario": s, "total": len(members), "percent": percent(len(members), n), **kinds})
    labels = []
    for s in _ordered([i["scenario"] for i in instances], tax.scenarios):
        members = [i["label"] for i in instances if i["scenario"] == s]
        known = tax.label_names(s) if s in tax.scenarios else []
        for lab in _ordered(members, known):
            labels.append(
                {
                    "scenario": s,
                    "label": lab,
                    "count": members.count(lab),
                    "percent_of_scenario": percent(members.count(lab), len(members)),
                    "percent_of_all": percent(members.count(lab), n),
                }
            )
    return {
        "instances": n,
        "field_values": n * len(TUPLE_FIELDS),
        "scenario": scenarios,
        "modality": dist("modality", list(MODALITY_NAMES)),
        "domain": dist("domain", tax.domains),
        "culture": dist("culture", tax.cultures),
        "composition": composition,
        "labels": labels,
    }


def _fmt(p: float | None) -> str:
    return SIGNED.number(p)


def _title(name: str) -> str:
    return MODALITY_NAMES.get(name, name).title()


def table1_rows(stats: Mapping[str, Any]) -> list[tuple[str, str, int, float | None]]:
    rows = [("Total", "instances", stats["instances"], 100.0 if stats["instances"] else None)]
    for group in ("scenario", "modality", "domain", "culture"):
        rows += [(group.title(), _title(d["name"]), d["count"], d["percent"]) for d in stats[group]]
    return rows


def _render(
    title: str,
    head: Sequence[str],
    rows: Sequence[Sequence[Any]],
    right: int,
    caption: str,
    label: str,
    align: str,
    notes: Sequence[str] = (),
) -> dict[str, str]:
    """The table in md, csv and tex (``right`` value columns; the LaTeX caption holds the notes)."""
    block = Block(list(head), [Row(list(r)) for r in rows], keys=len(head) - right, notes=list(notes), align=align)
    table = Table(title, [block], caption=Text(caption, tex=caption), label=label)
    tex = to_latex(Table(title, [replace(block, notes=[])], caption=table.caption, label=label))
    return {"md": to_markdown(table), "csv": to_csv(table), "tex": tex}


def table1(stats: Mapping[str, Any]) -> dict[str, str]:
    head = ("Group", "Category", "Count", "%")
    rows = [(g, c, k, _fmt(p)) for g, c, k, p in table1_rows(stats)]
    title, caption = "General statistics of the benchmark (Table 1 style)", "General statistics of the benchmark."
    return _render(title, head, rows, 2, caption, "tab:moca-stats", "llrr")


def table11(stats: Mapping[str, Any]) -> dict[str, str]:
    head = ("Scenario", "Image-text", "Video-text", "Total", "%")
    rows = [
        (r["scenario"].title(), r["image_text"], r["video_text"], r["total"], _fmt(r["percent"]))
        for r in stats["composition"]
    ]
    img = sum(r["image_text"] for r in stats["composition"])
    vid = sum(r["video_text"] for r in stats["composition"])
    rows.append(("All", img, vid, stats["instances"], _fmt(100.0 if stats["instances"] else None)))
    note = f"Field values: {stats['field_values']} ({len(TUPLE_FIELDS)} fields x {stats['instances']} instances)."
    title, caption = "Structural and modality composition", "Structural and modality composition. " + tex_escape(note)
    return _render(f"{title} (Table 11 style)", head, rows, 4, caption, "tab:moca-composition", "lrrrr", [note])


def labels_table(stats: Mapping[str, Any]) -> dict[str, str]:
    head = ("Scenario", "Label", "Count", "% of scenario", "% of all")
    rows = [
        (r["scenario"].title(), r["label"], r["count"], _fmt(r["percent_of_scenario"]), _fmt(r["percent_of_all"]))
        for r in stats["labels"]
    ]
    title, caption = "Label composition per scenario (Figure 3 style)", "Label composition per scenario."
    return _render(title, head, rows, 3, caption, "tab:moca-labels", "llrrr")


def figure_png(stats: Mapping[str, Any], dpi: int = 150) -> bytes:
    """Figure 3 style: inner ring the scenarios, outer ring each scenario's labels (empty ones left out)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    scen = [s for s in stats["scenario"] if s["count"]]
    fig = Figure(figsize=(7, 7))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_aspect("equal")
    if not scen:
        ax.text(0.5, 0.5, "no instances", ha="center", va="center")
        ax.axis("off")
    else:
        import matplotlib as mpl

        palettes = ["Blues", "Oranges", "Greens", "Purples", "Reds", "Greys"]
        inner_colors, outer, outer_colors, outer_labels = [], [], [], []
        for k, s in enumerate(scen):
            cmap = mpl.colormaps[palettes[k % len(palettes)]]
            inner_colors.append(cmap(0.7))
            labs = [r for r in stats["labels"] if r["scenario"] == s["name"] and r["count"]]
            for j, r in enumerate(labs):
                outer.append(r["count"])
                outer_colors.append(cmap(0.25 + 0.5 * j / max(1, len(labs))))
                outer_labels.append(f"{r['label']} ({_fmt(r['percent_of_scenario'])}%)")
        ring = {"wedgeprops": {"width": 0.3, "edgecolor": "white"}, "startangle": 90, "counterclock": False}
        small = {"fontsize": 6}
        ax.pie(outer, radius=1.0, colors=outer_colors, labels=outer_labels, labeldistance=1.05, textprops=small, **ring)
        ax.pie(
            [s["count"] for s in scen],
            radius=0.7,
            colors=inner_colors,
            labels=[f"{s['name'].title()}\n{_fmt(s['percent'])}%" for s in scen],
            labeldistance=0.55,
            textprops={"fontsize": 9, "ha": "center"},
            **ring,
        )
        ax.set_title(f"Scenarios and labels (N = {stats['instances']})")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()
