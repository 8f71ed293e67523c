"""MoCA's answer-stability table (beyond the paper; params ``moca.robustness``;
docs/decisions/answer-stability.md): per run asked again under K option orders, Holis under each, the
circular accuracy, the answers' agreement and the gap, with 95% intervals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from socialbench.core.errors import DataError
from socialbench.core.run_name import RunName
from socialbench.moca.eval.prompts import Order
from socialbench.moca.eval.scoring import FIELDS
from socialbench.moca.results.correctness import RunSummary
from socialbench.moca.schema.taxonomy import Taxonomy
from socialbench.results.stability import Stability, stability, stability_table
from socialbench.results.tables import SIGNED, Table, formats

NAME = "stability"
#: The correctness columns of a stability cell: the four fields (Table 2-4 order) and Holis (all four).
COLUMNS = (
    ("subject", "Subject"),
    ("target", "Target"),
    ("mechanism", "Mechanism"),
    ("label", "Label"),
    ("holis", "Holis"),
)
ALL = "all"
#: The long-format CSV's column that names a cell's group: its scenario ("all": every scenario).
GROUP_COLUMNS = ("scenario",)


def group_key(group: str) -> tuple[str]:
    return (group,)


def output_files() -> list[str]:
    """The files the stability table is written to (always: without order runs it says so)."""
    return [f"{NAME}.{ext}" for ext in ("md", "csv", "tex")]


def _matrix(instances, run: RunSummary) -> tuple[list[int], list[str], Any]:
    """(positions in ``instances``, scenarios, (N, 5) correctness in COLUMNS order), in the run summary's order."""
    import numpy as np

    by_scenario: dict[str, list[int]] = {}
    for n, inst in enumerate(instances):
        by_scenario.setdefault(inst["scenario"], []).append(n)
    at, scen, rows = [], [], []
    for s, m in run.cells.items():
        cols = {f: m[:, FIELDS.index(f)] for f in FIELDS}
        cols["holis"] = np.all(m[:, : len(FIELDS)], axis=1)
        rows.append(np.stack([cols[c] for c, _ in COLUMNS], axis=1))
        at += by_scenario[s]
        scen += [s] * len(by_scenario[s])
    return at, scen, np.concatenate(rows) if rows else np.zeros((0, len(COLUMNS)), dtype=bool)


def stability_cells(
    instances: list[dict[str, Any]],
    summaries: Mapping[tuple[str, str], RunSummary],
    robustness: Mapping[str, Any],
    tax: Taxonomy,
    seed: int,
) -> tuple[dict[tuple[str, str, str], Stability], list[str]]:
    """{(model, run, scenario or "all"): Stability} of the runs ``robustness`` asks for, and the scenarios."""
    import numpy as np

    k_all = int(robustness["orders"])
    order = Order(0, bool(robustness.get("reorder_lists", False)))
    distinct = np.array([order.distinct(i, tax) for i in instances], dtype=int)
    cells: dict[tuple[str, str, str], Stability] = {}
    names = [c for c, _ in COLUMNS]
    scenarios: list[str] = []
    for model in robustness.get("models") or []:
        for run in robustness.get("methods") or []:
            if (model, run) not in summaries:
                continue
            mats, answers = [], []
            for k in range(k_all):
                name = str(RunName.parse(run).with_order(k))
                if (model, name) not in summaries:
                    why = f"(params moca.robustness asks for {k_all} orders): run inference for it first"
                    raise DataError(f"{model}/{name}", f"no predictions of order {k} of {model}/{run} {why}")
                at, scen, m = _matrix(instances, summaries[(model, name)])
                mats.append(m)
                answers.append(summaries[(model, name)].resolved[at])
            correct = np.stack(mats)
            d = distinct[at]
            scenarios = sorted(set(scen))
            for s in [*scenarios, ALL]:
                pick = [n for n, x in enumerate(scen) if s in (x, ALL)]
                picked = (correct[:, pick], [a[pick] for a in answers], d[pick])
                cells[(model, run, s)] = stability(*picked, names, "holis", seed=seed, key=(model, run, s, "stability"))
    return cells, scenarios


def stability_files(
    instances: list[dict[str, Any]] | None,
    summaries: Mapping[tuple[str, str], RunSummary] | None,
    params: dict[str, Any],
    tax: Taxonomy,
) -> dict[str, Table]:
    """stability.md/.csv/.tex: the table, or an empty one saying why there is none."""
    robustness = (params.get("moca") or {}).get("robustness")
    notes = [
        "Beyond the paper (docs/decisions.md, 'Answer stability under option order'): no number here is"
        " from the paper, and no order run enters Tables 2-7. Order 0 is the paper's draw (the run of"
        " Tables 2-4); order k rotates the subject and target slots of that draw by k places"
        + (" and the mechanism and label lists too" if robustness and robustness.get("reorder_lists") else "")
        + ". Holis under each order: order 0, and the mean, min and max over the orders; circular: right"
        " under every order; agreement: the same four answers under every order; gap: order 0 Holis -"
        " circular Holis. 95% instance-level bootstrap intervals in brackets."
    ]
    if not robustness or instances is None or summaries is None:
        why = (
            "params moca.robustness is null: no order runs."
            if not robustness
            else "The tables were not given the instances and outcomes."
        )
        table = _table("Answer stability under option order", {}, [], [why, *notes], empty="(no order runs)")
        return formats(NAME, table)
    cells, scenarios = stability_cells(instances, summaries, robustness, tax, int(params["seed"]))
    k_all = int(robustness["orders"])
    fewer = max((st.fewer for (_, _, s), st in cells.items() if s == ALL), default=0)
    if fewer:
        notes.append(
            f"{fewer} instance(s) have fewer than K = {k_all} distinct orders (as many as the least common"
            " multiple of their rotated lists' lengths): they use their distinct ones."
        )
    title = f"Answer stability under option order (K = {k_all})"
    return formats(NAME, _table(title, cells, [(s, s) for s in scenarios], notes))


def _table(title: str, cells: dict, groups: list[tuple[str, str]], notes: list[str], **kw: Any) -> Table:
    """The stability table of ``cells``: a row group per scenario in ``groups``, then all scenarios."""
    style = {"style": SIGNED, "label": "tab:stability", "group_columns": GROUP_COLUMNS, "group_key": group_key}
    return stability_table(
        title, cells, [*groups, (ALL, "All scenarios")], COLUMNS, "Holis", notes=notes, **style, **kw
    )
