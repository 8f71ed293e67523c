"""MeetingToM's answer-stability table (beyond the paper; docs/decisions/answer-stability.md): per run,
accuracy under K option orders, circular accuracy, agreement and gap, with 95% intervals; Task 3.2
counts on every instance (the question is whether an answer moves with the order)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.run_name import RunName
from socialbench.meetingtom.eval.scoring import Group, group_of
from socialbench.meetingtom.results.intervals import RunSummary
from socialbench.meetingtom.results.tables import STYLE
from socialbench.meetingtom.schema.questions import TITLES
from socialbench.results.stability import Stability, stability, stability_table
from socialbench.results.tables import Table, formats

NAME = "stability"
COLUMNS = (("correct", "accuracy"),)
ALL = "all"


def output_files() -> list[str]:
    """The stability table's files (always written: without order runs it says so)."""
    return [f"{NAME}.{ext}" for ext in ("md", "csv", "tex")]


def stability_cells(
    instances: list[dict[str, Any]],
    summaries: Mapping[tuple[str, str], RunSummary],
    robustness: Mapping[str, Any],
    seed: int,
) -> tuple[dict[tuple[str, str, Group | str], Stability], list[Group]]:
    """{(model, run, group or "all"): Stability} of every run ``robustness`` asks for, and the groups; an
    order run missing beside its order 0 is a DataError naming it."""
    import numpy as np

    k_all = int(robustness["orders"])
    cells: dict[tuple[str, str, Group | str], Stability] = {}
    groups = sorted({group_of(i) for i in instances})
    for model in robustness.get("models") or []:
        for run in robustness.get("methods") or []:
            if (model, run) not in summaries:
                continue
            per_order = []
            for k in range(k_all):
                name = str(RunName.parse(run).with_order(k))
                if (model, name) not in summaries:
                    raise DataError(
                        f"{model}/{name}",
                        f"no predictions of order {k} of {model}/{run} (params meetingtom.robustness asks for"
                        f" {k_all} orders): run inference for it first",
                    )
                per_order.append(summaries[(model, name)])
            # an instance counts when every order evaluates it (a run's setting leaves the same ones out)
            keep = np.flatnonzero(np.logical_and.reduce([o.evaluated for o in per_order]))
            correct = np.stack([o.correct[keep] for o in per_order]).reshape(k_all, len(keep), 1)
            answers = [o.answers[keep] for o in per_order]
            distinct = np.array([max(1, len(instances[n]["options"])) for n in keep], dtype=int)
            group = [group_of(instances[n]) for n in keep]
            for g in [*groups, ALL]:
                pick = [j for j, x in enumerate(group) if g in (x, ALL)]
                cells[(model, run, g)] = stability(
                    correct[:, pick],
                    [a[pick] for a in answers],
                    distinct[pick],
                    ["correct"],
                    "correct",
                    seed=seed,
                    key=(model, run, g, "stability"),
                )
    return cells, groups


#: The long-format CSV's columns that name a cell's group ("all" for both: every task of every source).
GROUP_COLUMNS = ("task", "source")


def group_key(group: Group | str) -> tuple[str, str]:
    """(task, source) of a group, or of ``all`` (every task of every source)."""
    return (ALL, ALL) if group == ALL else tuple(group)


def stability_files(
    instances: list[dict[str, Any]] | None,
    summaries: Mapping[tuple[str, str], RunSummary] | None,
    params: Mapping[str, Any],
) -> dict[str, Table]:
    """stability.md/.csv/.tex: the table, or an empty one saying why (no robustness runs or no outcomes)."""
    robustness = (params.get("meetingtom") or {}).get("robustness")
    notes = [
        "Beyond the paper (docs/decisions.md, 'Answer stability under option order'): no number here is"
        " from the paper, and no order run enters the MeetingToM tables. Order 0 is the paper's draw (the"
        " run of the MeetingToM tables); order k rotates that draw's options by k places and numbers them"
        " 1, 2, ... again. Accuracy under each order: order 0, and the mean, min and max over the orders;"
        " circular: right under every order; agreement: the same answer under every order; gap: order 0 -"
        " circular. Task 3.2 counts on every instance (not conditioned on Task 3.1). 95% instance-level"
        " bootstrap intervals in brackets."
    ]

    def table(title: str, cells: Mapping, groups: list[Group], notes: list[str], **empty: str) -> dict[str, Table]:
        rows = [(g, f"{TITLES.get(g.task, g.task)} ({g.source})") for g in groups] + [(ALL, "All tasks")]
        kw = dict(style=STYLE, label="tab:stability", group_columns=GROUP_COLUMNS, group_key=group_key)
        return formats(NAME, stability_table(title, cells, rows, COLUMNS, "Accuracy", notes=notes, **kw, **empty))

    if not robustness or instances is None or summaries is None:
        why = "The tables were not given the instances and outcomes."
        if not robustness:
            why = "params meetingtom.robustness is null: no order runs."
        return table("Answer stability under option order", {}, [], [why, *notes], empty="(no order runs)")
    cells, groups = stability_cells(instances, summaries, robustness, int(params["seed"]))
    k_all = int(robustness["orders"])
    fewer = max((st.fewer for (_, _, g), st in cells.items() if g == ALL), default=0)
    if fewer:
        notes.append(
            f"{fewer} instance(s) have fewer than K = {k_all} options, so fewer distinct orders (an n-option"
            " item has n): they use their distinct ones."
        )
    return table(f"Answer stability under option order (K = {k_all})", cells, groups, notes)
