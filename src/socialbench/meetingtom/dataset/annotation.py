"""MeetingToM annotation round-trip (paper 3.3, B.3), pure: CSV sheets out; two annotators' and an
adjudicator's back; majority vote, pandera-validated gold, Fleiss' kappa on the agreement subset.
:func:`simulate_sheets` is the demo's TEST DOUBLE for the annotators."""

from __future__ import annotations

import copy
import csv
import functools
import io
import random
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from socialbench.core.errors import DataError
from socialbench.core.sheets import csv_rows, rows_match
from socialbench.meetingtom.schema.questions import ANNOTATED
from socialbench.meetingtom.schema.questions import MULTI as MULTI_TASKS

(MULTI,) = MULTI_TASKS  # the multi-select task: answers are sets of option labels
NONE_WORD = "none"  # a task3_2 answer naming no dissenter
ANNOTATORS = ("annotator_1", "annotator_2", "adjudicator")
AGREEMENTS = ("unanimous", "majority")
SIMULATED_NOTE = "simulated annotator (test double), not a human label"

SHEET_COLUMNS = (
    "item_id",
    "task",
    "source",
    "meeting",
    "clip_start",
    "clip_end",
    "clips",
    "question",
    "options",
    "transcript",
    "answer",
    "notes",
)
READ_COLUMNS = ("item_id", "task", "answer")  # what read_sheet uses; the rest is for the annotator


# ---- sheets ----------------------------------------------------------------------------------------
def _options_text(item: Mapping[str, Any]) -> str:
    return " | ".join(f"{o['label']}. {o.get('text', o.get('value', ''))}" for o in item.get("options") or [])


def _clip_paths(item: Mapping[str, Any]) -> str:
    videos = (item.get("media") or {}).get("videos") or {}
    return ";".join(
        str(videos[k]["path"]) for k in sorted(videos) if isinstance(videos[k], Mapping) and videos[k].get("path")
    )


def _window(item: Mapping[str, Any]) -> tuple[str, str]:
    window = (item.get("meta") or {}).get("window")
    if isinstance(window, (list, tuple)) and len(window) == 2:
        return f"{float(window[0]):.3f}", f"{float(window[1]):.3f}"
    return "", ""


def export_sheet(items: Iterable[Mapping[str, Any]], answers: Mapping[str, str] | None = None, note: str = "") -> str:
    """The annotation sheet as CSV: :data:`SHEET_COLUMNS`, a row per item by id (``answer`` as given)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(SHEET_COLUMNS)
    for item in sorted(items, key=lambda it: str(it["id"])):
        start, end = _window(item)
        w.writerow(
            [
                item["id"],
                item["task"],
                item.get("source", ""),
                (item.get("meta") or {}).get("meeting", ""),
                start,
                end,
                _clip_paths(item),
                item.get("question", ""),
                _options_text(item),
                item.get("transcript", ""),
                (answers or {}).get(item["id"], ""),
                note,
            ]
        )
    return out.getvalue()


def _parse_answer(raw: str, item: Mapping[str, Any], where: tuple[str, str]) -> str | tuple[str, ...] | None:
    source, row = where
    text = raw.strip()

    def bad(message: str) -> DataError:
        return DataError(source, f"answer {raw!r}{message}", record=row, field="answer")

    if not text:
        return None  # not labelled (an adjudicator labels only some items)
    labels = {str(o["label"]) for o in item.get("options") or []}
    shown = ", ".join(sorted(labels))
    if item["task"] != MULTI:
        label = text.upper()
        if label not in labels:
            raise bad(f" is not an option label of this item ({shown})")
        return label
    if text.lower() == NONE_WORD:
        return ()
    parts = [p.strip().upper() for p in text.split(";")]
    if any(not p for p in parts) or len(set(parts)) != len(parts):
        raise bad(f" is not a ';'-separated list of distinct option labels or {NONE_WORD!r}")
    unknown = [p for p in parts if p not in labels]
    if unknown:
        raise bad(f": {', '.join(unknown)} is not an option label of this item ({shown})")
    return tuple(sorted(parts))


def read_sheet(
    text: str, source: str, items_by_id: Mapping[str, Mapping[str, Any]], *, complete: bool = False
) -> dict[str, str | tuple[str, ...] | None]:
    """``{item_id: answer}`` of a filled-in sheet (task3_2: a sorted tuple; blank: None). A bad row, or
    (``complete``) a missing item, is a DataError naming ``source``, the line and the column."""
    _, rows = csv_rows(text, source, READ_COLUMNS, exact=False)
    answers: dict[str, str | tuple[str, ...] | None] = {}
    first_line: dict[str, int] = {}
    for line, cells in rows:
        where = f"line {line}"
        iid = cells["item_id"].strip()
        if not iid:
            raise DataError(source, "empty item id", record=where, field="item_id")
        if iid in first_line:
            why = f"duplicate item id {iid!r} (first on line {first_line[iid]})"
            raise DataError(source, why, record=where, field="item_id")
        if iid not in items_by_id:
            raise DataError(source, f"unknown item id {iid!r}: not in the items", record=where, field="item_id")
        item = items_by_id[iid]
        if cells["task"].strip() != item["task"]:
            why = f"task {cells['task']!r} but item {iid!r} is {item['task']}"
            raise DataError(source, why, record=where, field="task")
        first_line[iid] = line
        answers[iid] = _parse_answer(cells["answer"], item, (source, where))
    if complete:
        rows_match(source, first_line, items_by_id)
    return answers


# ---- majority vote -----------------------------------------------------------------------------------
def _norm(task: str, answer: Any) -> str | tuple[str, ...] | None:
    """An answer as read_sheet gives it (a cell's text is accepted too): None when blank."""
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        return None
    if task != MULTI:
        return str(answer).strip().upper()
    if isinstance(answer, str):
        text = answer.strip()
        return () if text.lower() == NONE_WORD else tuple(sorted({p.strip().upper() for p in text.split(";")}))
    return tuple(sorted(set(answer)))


def _show(answer: str | tuple[str, ...] | None) -> str | None:
    if answer is None or isinstance(answer, str):
        return answer
    return ";".join(answer) if answer else NONE_WORD


def _option_values(item: Mapping[str, Any], labels: Sequence[str]) -> list[str]:
    by_label = {str(o["label"]): o for o in item.get("options") or []}
    return [str(by_label[lab].get("value", by_label[lab].get("participant"))) for lab in labels]


def _vote(labels: tuple) -> tuple[str, str, Any]:
    """``("gold", agreement, label)`` or ``("discard", reason, detail)`` for (a1, a2, adjudicator)."""
    a1, a2, adj = labels
    blank = [n for n, v in zip(ANNOTATORS[:2], (a1, a2)) if v is None]
    if blank:
        return "discard", "not_labelled", f"{' and '.join(blank)} left it blank"
    if a1 == a2:
        return "gold", "unanimous" if adj is None or adj == a1 else "majority", a1
    if adj is None:
        why = f"the annotators disagree ({_show(a1)} vs {_show(a2)}) and the adjudicator left it blank"
        return "discard", "not_adjudicated", why
    if adj in (a1, a2):
        return "gold", "majority", adj
    return "discard", "no_majority", f"three different labels: {_show(a1)}, {_show(a2)}, {_show(adj)}"


def adjudicate(
    items: Sequence[Mapping[str, Any]],
    annotator_1: Mapping[str, Any],
    annotator_2: Mapping[str, Any],
    adjudicator: Mapping[str, Any],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(gold, discarded) records by item id: the majority vote (:func:`_vote`), then task3_2 only where its
    clip's task3_1 gold is ``pseudo_consensus`` (else ``not_applicable``) and names somebody."""
    gold: dict[str, dict[str, Any]] = {}
    discarded: list[dict[str, Any]] = []
    by_clip = {(str(it.get("source")), str(it.get("clip_id"))): it for it in items if it["task"] == "task3_1"}
    # task3_1 before task3_2: the latter's rule reads the former's gold.
    for item in sorted(items, key=lambda it: (it["task"] == MULTI, str(it["id"]))):
        iid, task = str(item["id"]), item["task"]
        labels = tuple(_norm(task, a.get(iid)) for a in (annotator_1, annotator_2, adjudicator))
        kind, how, what = _vote(labels)
        problem = (how, what) if kind == "discard" else None
        if problem is None and task == MULTI:
            pair = by_clip.get((str(item.get("source")), str(item.get("clip_id"))))
            pair_gold = gold.get(str(pair["id"])) if pair is not None else None
            if pair is None:
                problem = ("not_applicable", f"no task3_1 item of clip {item.get('clip_id')!r}")
            elif pair_gold is None:
                why = next((d["reason"] for d in discarded if d["item_id"] == str(pair["id"])), "no gold")
                problem = ("not_applicable", f"the task3_1 item {pair['id']} of this clip was discarded ({why})")
            elif (pair_value := pair_gold["value"]) != "pseudo_consensus":
                problem = ("not_applicable", f"the task3_1 gold of this clip is {pair_value}, not pseudo_consensus")
            elif not what:
                problem = ("no_dissenter", "the majority names no dissenter (none)")
        if problem:
            shown = dict(zip(ANNOTATORS, map(_show, labels)))
            discarded.append(
                {"item_id": iid, "task": task, "reason": problem[0], "detail": problem[1], "labels": shown}
            )
            continue
        if task == MULTI:
            label, value = ";".join(what), ";".join(sorted(_option_values(item, what)))
        else:
            label, value = what, _option_values(item, [what])[0]
        gold[iid] = {
            "item_id": iid,
            "task": task,
            "source": str(item.get("source", "")),
            "label": label,
            "value": value,
            "agreement": how,
            "votes": sum(v == what for v in labels),
            "adjudicated": labels[0] != labels[1],
        }
    return sorted(gold.values(), key=lambda g: g["item_id"]), sorted(discarded, key=lambda d: d["item_id"])


# ---- gold validation (pandera) ---------------------------------------------------------------------------
_LABEL_RE = r"[1-9]"  # option labels are numbers (spec.questions.LABELS)
_SET_RE = r"[1-9](;[1-9])*"
_PARTICIPANTS_RE = r"[A-Z](;[A-Z])*"  # task3_2 values: participant letters
_GOLD_TYPES = {
    "item_id": str,
    "task": str,
    "source": str,
    "label": str,
    "value": str,
    "agreement": str,
    "votes": int,
    "adjudicated": bool,
}


def _sorted_distinct(s) -> Any:
    return s.map(lambda t: (parts := t.split(";")) == sorted(set(parts)))


@functools.cache
def gold_schema():
    """The pandera schema of the gold table (built on first use: pandera takes ~0.5 s to import)."""
    import pandera.pandas as pa

    multi = lambda df: df["task"] == MULTI  # noqa: E731

    return pa.DataFrameSchema(
        {
            "item_id": pa.Column(str, pa.Check.str_length(min_value=1), unique=True, report_duplicates="exclude_first"),
            "task": pa.Column(str, pa.Check.isin(list(ANNOTATED))),
            **{c: pa.Column(str, pa.Check.str_length(min_value=1)) for c in ("source", "label", "value")},
            "agreement": pa.Column(str, pa.Check.isin(list(AGREEMENTS))),
            "votes": pa.Column(int, pa.Check.in_range(2, 3)),
            "adjudicated": pa.Column(bool),
        },
        checks=[
            *(
                pa.Check(
                    lambda df, c=c, rx=rx: ~multi(df) | (df[c].str.fullmatch(rx) & _sorted_distinct(df[c])),
                    name=f"task3_2 {c}: sorted distinct {what} joined by ';'",
                    element_wise=False,
                )
                for c, rx, what in (
                    ("label", _SET_RE, "option labels"),
                    ("value", _PARTICIPANTS_RE, "participant letters"),
                )
            ),
            pa.Check(lambda df: multi(df) | df["label"].str.fullmatch(_LABEL_RE), name="label: one option label"),
            pa.Check(
                lambda df: (
                    ((df["agreement"] == "majority") & (df["votes"] == 2))
                    | ((df["agreement"] == "unanimous") & ~df["adjudicated"])
                ),
                name="agreement: 'majority' has 2 votes, 'unanimous' is not adjudicated",
            ),
        ],
        strict=True,
        ordered=False,
        coerce=False,
        name="meetingtom gold",
    )


def __getattr__(name: str):
    if name == "GOLD_SCHEMA":  # lazy module attribute: importing this module does not import pandera
        return gold_schema()
    raise AttributeError(name)


def validate_gold(records: Sequence[Mapping[str, Any]], source: str) -> None:
    """Check gold records against :data:`GOLD_SCHEMA`: a DataError names ``source``, record and column."""
    import pandas as pd
    import pandera.errors

    def name(i: int) -> str:
        iid = records[i].get("item_id") if isinstance(records[i], Mapping) else None
        return iid if isinstance(iid, str) and iid else f"#{i + 1}"

    # Types and keys per record first: a DataFrame column of mixed types no longer says which record.
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            raise DataError(source, f"a gold record is a JSON object, not {type(rec).__name__}", record=f"#{i + 1}")
        for key, typ in _GOLD_TYPES.items():
            if key not in rec:
                raise DataError(source, "missing field", record=name(i), field=key)
            v = rec[key]
            if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
                raise DataError(source, f"{v!r} is not {typ.__name__}", record=name(i), field=key)
        extra = sorted(set(rec) - set(_GOLD_TYPES))
        if extra:
            raise DataError(source, "unknown field", record=name(i), field=extra[0])
    if not records:
        return  # an empty gold table (every item discarded) is valid; its report says why
    frame = pd.DataFrame([{k: r[k] for k in _GOLD_TYPES} for r in records], columns=list(_GOLD_TYPES))
    try:
        gold_schema().validate(frame, lazy=True)
    except pandera.errors.SchemaErrors as exc:
        fc = exc.failure_cases
        # The first failing record; a column's own check before a whole-row check, which lists every cell.
        fc = fc.assign(_pos=pd.to_numeric(fc["index"], errors="coerce"), _row=fc["schema_context"] != "Column")
        first = fc.sort_values(["_pos", "_row"], na_position="last", kind="stable").iloc[0]
        check, column = str(first["check"]), first["column"]
        if first["_row"]:  # a whole-row check is named "[task3_2 ]<column>: ..."
            column = check.split(":")[0].split()[-1]
        pos = first["_pos"]
        record = name(int(pos)) if pd.notna(pos) else None
        if check == "field_uniqueness":  # the later copy, with its position: the id alone names both
            message, record = f"duplicate item id {first['failure_case']!r}", f"{record} (#{int(pos) + 1})"
        else:
            shown = records[int(pos)][column] if pd.notna(pos) and column in _GOLD_TYPES else first["failure_case"]
            message = f"{shown!r} fails the check {check}"
        raise DataError(source, message, record=record, field=column) from None


# ---- agreement (Fleiss' kappa) ---------------------------------------------------------------------------
def fleiss_kappa(table: Any) -> float:
    """Fleiss' (1971) kappa of a count table (items x categories, each row summing to the same number of
    raters, at least 2); NaN when chance agreement is 1 (a single category used)."""
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 1:
        raise ValueError(f"a 2-D table with at least one row and column, got shape {t.shape}")
    if (t < 0).any() or not np.array_equal(t, np.round(t)):
        raise ValueError("cells are counts of raters: non-negative integers")
    n = t.sum(axis=1)
    if not np.all(n == n[0]) or n[0] < 2:
        raise ValueError(
            f"every row needs the same number of raters, at least 2; got row sums {sorted(set(n.tolist()))}"
        )
    raters, items = n[0], t.shape[0]
    p_item = ((t * t).sum(axis=1) - raters) / (raters * (raters - 1))
    p_cat = t.sum(axis=0) / (items * raters)
    p_bar, p_e = p_item.mean(), float((p_cat * p_cat).sum())
    if np.isclose(p_e, 1.0):
        return float("nan")
    return float((p_bar - p_e) / (1 - p_e))


def _category(item: Mapping[str, Any], answer: str | tuple[str, ...]) -> str:
    # Option labels are shuffled per item, so agreement is on what a label means (its value).
    if isinstance(answer, tuple):
        return ";".join(sorted(_option_values(item, answer))) or NONE_WORD
    return _option_values(item, [answer])[0]


def agreement_subset(items: Sequence[Mapping[str, Any]], seed: int, size: int) -> list[str]:
    """The sorted ids of the agreement subset, drawn before annotation: a seeded sample of ``size`` items
    of each task (paper 3.3: "200 instances per task"; all of a task with fewer). All three label these."""
    if size < 0:
        raise ValueError(f"the agreement subset size is a count >= 0, got {size}")
    chosen: list[str] = []
    for task in sorted({it["task"] for it in items}):
        ids = sorted(str(it["id"]) for it in items if it["task"] == task)
        chosen += random.Random(f"{seed}|agreement_subset|{task}").sample(ids, min(size, len(ids)))
    return sorted(chosen)


def agreement(
    items: Sequence[Mapping[str, Any]],
    annotator_1: Mapping[str, Any],
    annotator_2: Mapping[str, Any],
    adjudicator: Mapping[str, Any],
    subset: Iterable[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Fleiss' kappa per task over the items all three labelled, among ``subset`` when given (else the
    adjudicated disagreements are over-represented); ``kappa`` None with a ``note`` when undefined."""
    chosen = None if subset is None else {str(i) for i in subset}
    out: dict[str, dict[str, Any]] = {}
    for task in sorted({it["task"] for it in items}):
        rows, missing = [], []
        for item in sorted((it for it in items if it["task"] == task), key=lambda it: str(it["id"])):
            if chosen is not None and str(item["id"]) not in chosen:
                continue
            labels = [_norm(task, a.get(str(item["id"]))) for a in (annotator_1, annotator_2, adjudicator)]
            if all(v is not None for v in labels):
                rows.append([_category(item, v) for v in labels])
            else:
                missing.append(str(item["id"]))
        cats = sorted({c for r in rows for c in r})
        rec: dict[str, Any] = {
            "n_items": len(rows),
            "raters": 3,
            "kappa": None,
            "categories": cats,
            "subset": "all three labelled" if chosen is None else "agreement subset",
            **({"missing": missing} if chosen is not None else {}),
        }
        if len(rows) < 2:
            rec["note"] = f"undefined: {len(rows)} item(s) labelled by all three, fewer than 2"
        elif len(cats) < 2:
            rec["note"] = f"undefined: every label is {cats[0]!r} (chance agreement is 1)"
        else:
            table = [[r.count(c) for c in cats] for r in rows]
            rec["kappa"] = fleiss_kappa(table)
        out[task] = rec
    return out


# ---- gold into instances -----------------------------------------------------------------------------------
def apply_gold(
    items: Sequence[Mapping[str, Any]], gold_records: Sequence[Mapping[str, Any]], source: str = "gold"
) -> list[dict[str, Any]]:
    """A copy of each item with gold, in order, with ``answer`` (option label(s)) and ``gold`` (option
    value(s); task3_2 sorted lists). Gold naming no item or not matching its options is a DataError."""
    by_id = {str(g["item_id"]): g for g in gold_records}
    ids = {str(it["id"]) for it in items}
    unknown = sorted(set(by_id) - ids)
    if unknown:
        raise DataError(source, "gold for an item that is not in the items", record=unknown[0], field="item_id")
    out = []
    for item in items:
        g = by_id.get(str(item["id"]))
        if g is None:
            continue
        inst, rid = copy.deepcopy(dict(item)), str(g["item_id"])
        labels = str(g["label"]).split(";") if item["task"] == MULTI else [str(g["label"])]
        known = {str(o["label"]) for o in item.get("options") or []}
        if any(lab not in known for lab in labels):
            why = f"label {g['label']!r} is not an option label of the item"
            raise DataError(source, why, record=rid, field="label")
        values = sorted(_option_values(item, labels))
        if ";".join(values) != str(g["value"]):
            means = f"is not what label {g['label']!r} means ({';'.join(values)})"
            raise DataError(source, f"value {g['value']!r} {means}", record=rid, field="value")
        inst["answer"] = sorted(labels) if item["task"] == MULTI else labels[0]
        inst["gold"] = values if item["task"] == MULTI else values[0]
        out.append(inst)
    return out


# ---- simulated annotators (a TEST DOUBLE for people) ------------------------------------------------------
#: task1, target as speaker: AMI dialogue-act type -> state (others: active engagement)
SPEAKER_ACTS = {
    **dict.fromkeys(("ass", "be.pos"), "supportive_endorsement"),
    **dict.fromkeys(("el.inf", "el.ass", "el.und"), "confused_bewilderment"),
    **dict.fromkeys(("stl", "fra"), "hesitation"),
    "be.neg": "cognitive_conflict",
}
REPLY_ATTITUDE = {"POS": "positive", "NEG": "negative", "UNC": "uncertain"}  # task2_2; else neutral


def _meta(item: Mapping[str, Any], source: str, *keys: str) -> dict[str, Any]:
    meta, rid = item.get("meta"), str(item.get("id"))
    if not isinstance(meta, Mapping):
        why = "no meta: the simulated annotator reads the construction metadata"
        raise DataError(source, why, record=rid, field="meta")
    for k in keys:
        if k not in meta:
            raise DataError(source, f"meta has no {k!r}", record=rid, field=f"meta.{k}")
    return dict(meta)


def _proxy_value(item: Mapping[str, Any], source: str) -> str | list[str]:
    task = item["task"]
    if task == "task1":
        m = _meta(item, source, "role", "target")
        if m["role"] == "speaker":
            return SPEAKER_ACTS.get(str(m.get("act_type")), "active_engagement")
        if m.get("basis") == "backchannel" or m.get("act_type") == "bck":
            return "supportive_endorsement"
        if m.get("addressed"):
            return "focused_listening"
        spoke = float((m.get("speech_s") or {}).get(m["target"], 0.0) or 0.0)
        return "disengaged_withdrawal" if spoke <= 0 else "focused_listening"
    if task == "task2_2":
        reply = _meta(item, source).get("reply") or {}
        return REPLY_ATTITUDE.get(str(reply.get("pair_type")), "neutral")
    if task in ("task3_1", MULTI):
        m = _meta(item, source, "participants", "proposers", "agreeing")
        proposers, agreeing = set(m["proposers"]), set(m["agreeing"])
        others = [p for p in m["participants"] if p not in proposers]
        silent = sorted(p for p in others if p not in agreeing)
        state = "no_consensus" if not agreeing else "genuine_consensus" if not silent else "pseudo_consensus"
        if task == "task3_1":
            return state
        return silent if state == "pseudo_consensus" else []
    raise DataError(source, f"no simulated annotator for task {task!r}", record=str(item.get("id")), field="task")


def proxy_label(item: Mapping[str, Any], source: str = "items") -> str:
    """The simulated annotator's sheet cell, from rules on ``item["meta"]`` (docs/meetingtom.md)."""
    value = _proxy_value(item, source)
    by_value = {str(o.get("value", o.get("participant"))): str(o["label"]) for o in item.get("options") or []}
    wanted = value if isinstance(value, list) else [value]
    missing = [v for v in wanted if v not in by_value]
    if missing:
        raise DataError(source, f"no option has value {missing[0]!r}", record=str(item.get("id")), field="options")
    if isinstance(value, list):
        return ";".join(sorted(by_value[v] for v in value)) or NONE_WORD
    return by_value[value]


def _other_answer(item: Mapping[str, Any], right: str, rng: random.Random) -> str:
    labels = sorted(str(o["label"]) for o in item.get("options") or [])
    # task3_2's wrong sets: the empty set and every set of one or two participants
    sets = [NONE_WORD] + [";".join(c) for k in (1, 2) for c in combinations(labels, k)]
    pool = [a for a in (sets if item["task"] == MULTI else labels) if a != right]
    return rng.choice(pool) if pool else right


def _simulated(item: Mapping[str, Any], right: str, seed: int, who: str, accuracy: float) -> str:
    """``right`` with probability ``accuracy``, else another answer; seeded per (seed, who, item) alone."""
    rng = random.Random(f"{seed}|{who}|{item['id']}")
    return right if rng.random() < accuracy else _other_answer(item, right, rng)


def simulate_sheets(
    items: Sequence[Mapping[str, Any]],
    seed: int,
    accuracy: float = 0.85,
    agreement_items: int = 200,
    source: str = "items",
) -> tuple[str, str, str]:
    """Sheets of two SIMULATED annotators and a SIMULATED adjudicator: :func:`proxy_label` with probability
    ``accuracy``, else another answer; the adjudicator labels the agreement subset and every disagreement."""
    if not 0 <= accuracy <= 1 or agreement_items < 0:
        raise ValueError("accuracy lies in [0, 1] and agreement_items is a count >= 0")
    rows = [(str(it["id"]), it, proxy_label(it, source)) for it in items]
    a1, a2 = ({i: _simulated(it, right, seed, who, accuracy) for i, it, right in rows} for who in ANNOTATORS[:2])
    subset = set(agreement_subset(items, seed, agreement_items))
    adj = {
        i: _simulated(it, right, seed, "adjudicator", accuracy)
        for i, it, right in rows
        if i in subset or _norm(it["task"], a1[i]) != _norm(it["task"], a2[i])
    }
    return tuple(export_sheet(items, answers, SIMULATED_NOTE) for answers in (a1, a2, adj))  # type: ignore[return-value]


# ---- a simulated human evaluation (the demo's human row; a TEST DOUBLE, not people) ----
SIMULATED_HUMAN_NOTE = "simulated human evaluator (test double), not a human answer"


def simulate_human(instances: Sequence[Mapping[str, Any]], seed: int, accuracy: float = 0.8) -> list[dict[str, Any]]:
    """Prediction records of a SIMULATED human: the gold answer with probability ``accuracy``, else another."""
    if not 0 <= accuracy <= 1:
        raise ValueError("accuracy lies in [0, 1]")
    out = []
    for inst in sorted(instances, key=lambda i: str(i["id"])):
        gold = inst["answer"]
        chosen = _simulated(inst, ";".join(gold) if isinstance(gold, list) else str(gold), seed, "human", accuracy)
        if inst["task"] == MULTI:
            answer: Any = [] if chosen == NONE_WORD else sorted(chosen.split(";"))
        else:
            answer = chosen
        out.append({"id": str(inst["id"]), "answer": answer, "note": SIMULATED_HUMAN_NOTE})
    return out
