"""MeetingToM's Figure 4 (label distribution per task, a bar per source; Task 3.2: the number of dissenters)
and its counts, from the instances' gold values; pure, same instances, same bytes."""

from __future__ import annotations

from typing import Any

from socialbench.meetingtom.eval.scoring import MULTI_TASK, option_value
from socialbench.meetingtom.schema.questions import VOCABULARY
from socialbench.meetingtom.schema.settings import SOURCES
from socialbench.results.tables import csv_text, drawn, new_figure

#: Each task's values in option order (the vocabularies'; Task 2.1's participant letters).
TASK_VALUES = {"task2_1": ["A", "B", "C", "D"], **{t: list(v) for t, v in VOCABULARY.items()}}
TASK_TITLES = {
    "task1": "Task 1: mental state",
    "task2_1": "Task 2.1: addressee",
    "task2_2": "Task 2.2: attitude",
    "task3_1": "Task 3.1: consensus",
    "task3_2": "Task 3.2: number of dissenters",
}


def gold_value(instance: dict[str, Any]) -> str:
    """The value a Figure 4 bar counts: the gold option's value (Task 3.2: how many dissenters)."""
    if instance["task"] == MULTI_TASK:
        return str(len(set(instance["answer"])))
    return next(option_value(o) for o in instance["options"] if o["label"] == instance["answer"])


def distribution(instances: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """{task: {value: {source: count}}}, tasks in the paper's order, values in option order."""
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for inst in instances:
        per = counts.setdefault(inst["task"], {}).setdefault(gold_value(inst), {})
        per[inst["source"]] = per.get(inst["source"], 0) + 1
    out = {}
    for task in sorted(counts, key=lambda t: (list(TASK_TITLES).index(t) if t in TASK_TITLES else len(TASK_TITLES), t)):
        known = TASK_VALUES.get(task, [])
        order = [v for v in known if v in counts[task]] + sorted(v for v in counts[task] if v not in known)
        out[task] = {v: counts[task][v] for v in order}
    return out


@drawn
def _draw(dist: dict[str, dict[str, dict[str, int]]]):
    from matplotlib.ticker import MaxNLocator

    tasks = list(dist) or ["none"]
    fig = new_figure(3.2 * len(tasks), 3.0)
    axes = fig.subplots(1, len(tasks), squeeze=False)[0]
    if not dist:
        axes[0].text(0.5, 0.5, "no instances", ha="center", va="center")
        axes[0].set_axis_off()
        return fig
    sources = [s for s in SOURCES if any(s in per for d in dist.values() for per in d.values())]
    width = 0.8 / max(1, len(sources))
    for ax, task in zip(axes, tasks):
        values = list(dist[task])
        for k, src in enumerate(sources):
            xs = [i + (k - (len(sources) - 1) / 2) * width for i in range(len(values))]
            ax.bar(xs, [dist[task][v].get(src, 0) for v in values], width, label=src)
        ax.set_xticks(range(len(values)))
        ax.set_xticklabels([v.replace("_", "\n") for v in values], fontsize=6)
        ax.set_title(TASK_TITLES.get(task, task))
        ax.set_ylabel("instances")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].legend(title="source", fontsize=6)
    return fig


def data_csv(dist: dict[str, dict[str, dict[str, int]]]) -> str:
    rows = (
        [task, value, src, per_source[src]]
        for task, per_value in dist.items()
        for value, per_source in per_value.items()
        for src in sorted(per_source)
    )
    return csv_text(["task", "value", "source", "count"], rows)


def label_distribution(instances: list[dict[str, Any]]) -> dict[str, str | bytes]:
    """``figures/figure4_label_distribution.{png,pdf}`` and ``figures/figure4.csv``."""
    dist = distribution(instances)
    figure = _draw(dist)
    return {
        "figures/figure4_label_distribution.png": figure["png"],
        "figures/figure4_label_distribution.pdf": figure["pdf"],
        "figures/figure4.csv": data_csv(dist),
    }
