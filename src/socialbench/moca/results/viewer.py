"""What the trace viewer shows of a MoCA instance (pure): the media, text and transcript, the tuple gold
against predicted, each field marked by the scorer's own rule (section 3.3), the error and the format."""

from __future__ import annotations

from typing import Any

from socialbench.moca.eval.scoring import field_matches, instance_valid_sets, is_invalid, normalize

#: The tuple in the paper's order (section 3.1).
VIEW_ORDER = ("subject", "target", "mechanism", "label")
NO_PREDICTION = "no prediction for this instance (scored incorrect and invalid)"


def frame_caption(f: dict[str, Any]) -> str:
    ts = f.get("timestamp")
    return (f"t={ts:.2f} s" if isinstance(ts, (int, float)) else "t=?") + f" · frame {f.get('index')}"


def media_items(inst: dict[str, Any]) -> list[dict[str, Any]]:
    """The sampled frames the model saw (or the clip, before sampling), or the images."""
    if inst["modality"] == "video_text":
        frames = inst.get("frames") or []
        if frames:
            return [
                {"kind": "frame", "path": f["path"], "sha256": f.get("sha256"), "caption": frame_caption(f)}
                for f in frames
            ]
        return [{"kind": "video", "path": p, "caption": p} for p in inst["media"]]
    return [{"kind": "image", "path": p, "caption": p} for p in inst["media"]]


def field_note(name: str, pred: dict[str, Any] | None, valid: dict[str, set[str]]) -> str | None:
    """Why a predicted field is wrong beyond a mismatch: the parser's error, or a value outside the options."""
    if pred is None:
        return None
    err = (pred.get("field_errors") or {}).get(name)
    if err:
        return str(err)
    v = pred.get(name)
    if v is not None and normalize(v) not in valid[name]:
        return "not one of the valid values"
    return None


def order_note(order: dict[str, Any]) -> str:
    """An order run's order: ``2 (shown as order 0: 2 distinct orders)`` when the instance repeats one."""
    shown = "" if order["shown"] == order["index"] else f"shown as order {order['shown']}: "
    return f"{order['index']} ({shown}{order['distinct']} distinct orders)"


def slots_text(slots: dict[str, dict[str, str]]) -> str:
    """The slot ids and what they showed, role by role (``subject0: the coach; ...``)."""
    return "\n".join(
        "; ".join(f"{k}: {v}" for k, v in (slots.get(role) or {}).items()) for role in ("subject", "target")
    )


def row(inst: dict[str, Any], pred: dict[str, Any] | None, labels: list[str], mechanisms: list[str]) -> dict[str, Any]:
    valid = instance_valid_sets(inst, labels, mechanisms)
    correct = field_matches(inst, pred, valid)
    fields = []
    for k in VIEW_ORDER:
        f = {
            "name": k,
            "gold": inst[k],
            "pred": None if pred is None else pred.get(k),
            "correct": correct[k],
            "note": field_note(k, pred, valid),
        }
        if k in ("subject", "target"):
            f["options"] = inst[f"{k}_options"]
        fields.append(f)
    badges = []
    if is_invalid(pred, valid):
        badges.append(["invalid", "bad"])
    if correct["subject"] and correct["target"]:
        badges.append(["dyad ✓", "ok"])
    if pred is not None and pred.get("finish_reason") == "length":
        badges.append(["truncated", "bad"])
    texts = [["text", inst["text"]]] + ([["transcript", inst["transcript"]]] if inst.get("transcript") else [])
    meta = [[k, inst[k]] for k in ("modality", "domain", "culture", "source")]
    if pred is not None:
        meta.append(["finish reason", pred.get("finish_reason")])
    order = (pred or {}).get("order")
    if order:  # an order run's page (params moca.robustness): the order asked and the slots it showed
        meta.append(["option order", order_note(order)])
        texts.append(["slots shown", slots_text(pred.get("slots") or {})])
    return {
        "id": inst["id"],
        "group": inst["scenario"],
        "group_label": "scenario",
        "texts": texts,
        "media": media_items(inst),
        "fields": fields,
        "correct": all(correct.values()),
        "error": NO_PREDICTION if pred is None else pred.get("error"),
        "badges": badges,
        "meta": meta,
        "raw": None if pred is None else pred.get("raw"),
    }


def rows(
    instances: list[dict[str, Any]],
    predictions: dict[str, dict[str, Any]],
    traces: dict[str, dict[str, Any]],
    labels: dict[str, list[str]],
    mechanisms: dict[str, list[str]],
) -> list[dict[str, Any]]:
    """One row per instance, in the instances' order (the core draws each row's calls and trace)."""
    return [
        row(i, predictions.get(i["id"]), labels.get(i["scenario"], []), mechanisms.get(i["scenario"], []))
        for i in instances
    ]
