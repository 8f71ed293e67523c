"""The annotation round-trip of MoCA (section 4.1, appendix B.2-B.3): the candidate pool goes out to
annotator sheets under a 7-field codebook, comes back with annotations, a reviewer's field-level
cross-check (B.2 step 2) and an arbiter's decisions on the disputed candidates (step 3), and leaves as
the final benchmark in the instance schema. Sheets are CSV (UTF-8, a byte-order mark accepted).

Agreement is structural (B.3): two versions agree only when all seven fields match after
normalisation. Final validation (B.2 step 4) keeps a candidate only with a valid, coherent tuple and
evidence; every candidate ends in the benchmark or in the report with its reason."""

from __future__ import annotations

import csv
import io
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError, DataError
from socialbench.core.sheets import distinct_sheets
from socialbench.moca.dataset.sources.readers import read_text, table_rows
from socialbench.moca.schema.instances import all_problems
from socialbench.moca.schema.normalize import normalize
from socialbench.moca.schema.taxonomy import Taxonomy

TUPLE_FIELDS = ("scenario", "domain", "culture", "subject", "target", "mechanism", "label")
OPTION_FIELDS = ("subject_options", "target_options")
EXTRA_FIELDS = ("evidence", "rationale", "discard_reason")
ANNOTATION_FIELDS = TUPLE_FIELDS + OPTION_FIELDS + EXTRA_FIELDS
INFO_COLUMNS = ("id", "source", "modality", "text", "context", "media")
ANNOTATOR_COLUMNS = INFO_COLUMNS + ("annotator",) + ANNOTATION_FIELDS
REVIEWED_FIELDS = TUPLE_FIELDS + OPTION_FIELDS
REVIEW_COLUMNS = (
    INFO_COLUMNS
    + ("annotator", "reviewer")
    + tuple(c for f in REVIEWED_FIELDS for c in (f"annotated_{f}", f))
    + ("annotated_evidence", "evidence_supported", "comment")
)
DECISIONS = ("retain", "revise", "reject")
ARBITRATION_COLUMNS = (
    INFO_COLUMNS
    + ("disagreements", "versions", "arbiter", "decision")
    + TUPLE_FIELDS
    + OPTION_FIELDS
    + ("evidence", "reason")
)
OPTION_SEP = "|"
N_OPTIONS = 4


def codebook(tax: Taxonomy) -> dict[str, Any]:
    """The 7-field codebook as data: what each field means and its admissible values."""
    return {
        "fields": {
            "scenario": "The central latent variable: affection (what is felt), intent (what outcome is pursued),"
            " stance (what relational position is adopted).",
            "domain": "The social setting of the interaction.",
            "culture": "The socio-cultural context needed to read it (general context when none is).",
            "subject": "Who expresses the implicit meaning (may be implicit or presupposed, e.g. 'the meme poster').",
            "target": "Toward whom or what it is directed (the direction matters: subject -> target).",
            "mechanism": "How the implicit meaning is realized; one of the scenario's mechanisms.",
            "label": "The latent social state; one of the scenario's labels.",
            "subject_options": (
                f"{N_OPTIONS} candidate subjects separated by '{OPTION_SEP}', the gold subject among them."
            ),
            "target_options": f"{N_OPTIONS} candidate targets separated by '{OPTION_SEP}', the gold target among them.",
            "evidence": "The cues in the text, image or video that support the tuple (required).",
            "rationale": "Why this tuple (optional, read by the reviewer and arbiter).",
            "discard_reason": "Fill instead of the fields to propose dropping the candidate (why).",
        },
        "scenarios": {
            s: {
                "labels": {o.name: o.criterion for o in tax.labels[s]},
                "mechanisms": {o.name: o.criterion for o in tax.mechanisms[s]},
            }
            for s in tax.scenarios
        },
        "domains": list(tax.domains),
        "cultures": list(tax.cultures),
    }


def codebook_markdown(tax: Taxonomy) -> str:
    book = codebook(tax)
    lines = [
        "# MoCA annotation codebook",
        "",
        "Fill the seven fields of the tuple for each candidate, from the"
        " complete multimodal input (text, image or video, transcript and context).",
        "",
        "## Fields",
        "",
    ]
    lines += [f"- **{name}**: {text}" for name, text in book["fields"].items()]
    lines += ["", f"Domains: {', '.join(book['domains'])}.", "", f"Cultures: {', '.join(book['cultures'])}.", ""]
    for s, spec in book["scenarios"].items():
        lines += [f"## {s}", "", "Labels:", ""]
        lines += [f"- {name}: {crit}" for name, crit in spec["labels"].items()]
        lines += ["", "Mechanisms:", ""]
        lines += [f"- {name}: {crit}" for name, crit in spec["mechanisms"].items()]
        lines.append("")
    return "\n".join(lines)


def to_csv(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: "" if row.get(c) is None else row.get(c) for c in columns})
    return buf.getvalue()


def read_sheet(path: str | Path, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """(line, row) of a CSV sheet; a bad column, row or encoding is a DataError naming file and line."""
    _, rows = table_rows(read_text(path), str(path), required)
    return [(line, {k: (v or "").strip() for k, v in row.items()}) for line, row in rows]


def _context_lines(rec: Mapping[str, Any]) -> list[str]:
    return [f"{c['speaker'] or '?'}: {c['text']}" for c in rec.get("context", [])]


def _info(rec: Mapping[str, Any]) -> dict[str, str]:
    media = list(rec.get("media", [])) + list(rec.get("media_urls", []))
    speaker = f"{rec['speaker']}: " if rec.get("speaker") else ""
    return {
        "id": rec["id"],
        "source": rec["source"],
        "modality": rec["modality"],
        "text": speaker + rec["text"],
        "context": "\n".join(_context_lines(rec)),
        "media": "\n".join(media),
    }


def assign(
    ids: Sequence[str], people: Sequence[str], per_item: int, seed: int, role: str = "annotation"
) -> dict[str, list[str]]:
    """Each id to ``per_item`` distinct people, balanced round-robin over a seeded shuffle of the ids."""
    if not people or len(set(people)) != len(people):
        raise ConfigError(f"{role}: expected distinct names, got {list(people)}")
    if not 1 <= per_item <= len(people):
        raise ConfigError(f"{role}: {per_item} per item needs at least that many people (have {len(people)})")
    order = sorted(ids)
    random.Random(f"{seed}:{role}").shuffle(order)
    return {cid: [people[(k + t) % len(people)] for t in range(per_item)] for k, cid in enumerate(order)}


def annotator_sheets(
    pool: Sequence[Mapping[str, Any]], assignment: Mapping[str, Sequence[str]]
) -> dict[str, list[dict[str, str]]]:
    """Rows of each annotator's sheet, sorted by id."""
    by_id = {r["id"]: r for r in pool}
    sheets: dict[str, list[dict[str, str]]] = {}
    for cid in sorted(assignment):
        for who in assignment[cid]:
            sheets.setdefault(who, []).append({**_info(by_id[cid]), "annotator": who})
    return sheets


@dataclass(frozen=True)
class Version:
    """One person's tuple for one candidate (values as written; compared after normalisation)."""

    who: str
    role: str  # annotator | reviewer | arbiter
    fields: dict[str, str]
    source: str = ""  # file and line, for messages

    def get(self, name: str) -> str:
        return self.fields.get(name, "")

    def discarded(self) -> bool:
        return bool(self.get("discard_reason"))


def _n(value: str) -> str:
    return normalize(value) or ""


def compare(a: Version, b: Version) -> list[str]:
    """Structural disagreements between two versions (empty: they agree)."""
    out = [f for f in ("scenario", "domain", "culture") if _n(a.get(f)) != _n(b.get(f))]
    sa, ta, sb, tb = (_n(a.get("subject")), _n(a.get("target")), _n(b.get("subject")), _n(b.get("target")))
    if sa != sb or ta != tb:
        one = {(True, False): "subject", (False, True): "target"}.get((sa != sb, ta != tb), "subject_and_target")
        out.append("direction_reversed" if (sa, ta) == (tb, sb) else one)
    out += [f for f in ("mechanism", "label") if _n(a.get(f)) != _n(b.get(f))]
    return out


def invalid_choices(v: Version, tax: Taxonomy) -> list[str]:
    """What in a version is outside the codebook (scenario, domain, culture, mechanism, label)."""
    out = []
    scen = _n(v.get("scenario"))
    if scen not in tax.scenarios:
        return ["scenario"]
    if tax.domains and _n(v.get("domain")) not in tax.domains:
        out.append("domain")
    if tax.cultures and _n(v.get("culture")) not in tax.cultures:
        out.append("culture")
    if _n(v.get("mechanism")) not in {_n(m) for m in tax.mechanism_names(scen)}:
        out.append("mechanism")
    if _n(v.get("label")) not in {_n(lab) for lab in tax.label_names(scen)}:
        out.append("label")
    return out


def reviewed(annotation: Version, review: Mapping[str, str], reviewer: str, where: str) -> Version:
    """The reviewer's version: the annotated values, with each field the reviewer filled replaced."""
    fields = dict(annotation.fields)
    for f in REVIEWED_FIELDS:
        if review.get(f):
            fields[f] = review[f]
    return Version(reviewer, "reviewer", fields, where)


def find_disputes(
    versions: Mapping[str, Sequence[Version]], evidence_rejected: Mapping[str, bool], tax: Taxonomy
) -> dict[str, list[str]]:
    """Per candidate, what is disputed: disagreements, invalid choices, a discard, unsupported evidence."""
    out: dict[str, list[str]] = {}
    for cid, vs in versions.items():
        found: list[str] = []
        if any(v.discarded() for v in vs):
            found.append("discard_proposed")
        complete = [v for v in vs if not v.discarded()]
        for other in complete[1:]:
            found += [f"{d} ({complete[0].who} vs {other.who})" for d in compare(complete[0], other)]
        for v in complete:
            found += [f"invalid:{f} ({v.who})" for f in invalid_choices(v, tax)]
        if evidence_rejected.get(cid):
            found.append("evidence_unsupported")
        if found:
            out[cid] = found
    return out


def agreement_summary(versions: Mapping[str, Sequence[Version]]) -> dict[str, Any]:
    """How often independent versions agree, structurally and on the label alone (B.3), per field."""
    pairs = structural = label_only = 0
    per_field: dict[str, int] = {}
    for vs in versions.values():
        complete = [v for v in vs if not v.discarded()]
        for other in complete[1:]:
            pairs += 1
            diffs = compare(complete[0], other)
            structural += not diffs
            label_only += _n(complete[0].get("label")) == _n(other.get("label"))
            for d in diffs:
                per_field[d] = per_field.get(d, 0) + 1
    return {
        "pairs": pairs,
        "structural_agreement": structural,
        "label_agreement": label_only,
        "disagreements_by_field": dict(sorted(per_field.items())),
    }


def options(value: str) -> list[str]:
    return [o.strip() for o in value.split(OPTION_SEP) if o.strip()]


def final_problems(v: Version, tax: Taxonomy) -> list[tuple[str, str]]:
    """(field, problem) pairs that keep a tuple out of the benchmark (B.2 step 4)."""
    scen, coded = _n(v.get("scenario")), ("scenario", "domain", "culture")
    problems = [
        (f, "not in the codebook" if f in coded else f"not a {f} of scenario {scen!r}") for f in invalid_choices(v, tax)
    ]
    for f in TUPLE_FIELDS:
        if not v.get(f):
            problems.append((f, "empty"))
    subj, tgt = v.get("subject"), v.get("target")
    if subj and tgt and _n(subj) == _n(tgt):
        problems.append(("target", "the same as the subject: a directed relation needs two parties"))
    for f, gold in (("subject_options", subj), ("target_options", tgt)):
        opts = options(v.get(f))
        if len(opts) != N_OPTIONS or len({_n(o) for o in opts}) != N_OPTIONS:
            problems.append((f, f"expected {N_OPTIONS} distinct options separated by '{OPTION_SEP}', got {len(opts)}"))
        elif gold and _n(gold) not in {_n(o) for o in opts}:
            problems.append((f, f"the gold {gold!r} is not among the options"))
    if not v.get("evidence"):
        problems.append(("evidence", "no evidence given: the tuple must be supported by the input"))
    return problems


def _canonical(value: str, names: Sequence[str]) -> str:
    by_norm = {_n(n): n for n in names}
    return by_norm.get(_n(value), value)


def to_instance(rec: Mapping[str, Any], v: Version, tax: Taxonomy) -> dict[str, Any]:
    """A validated tuple and its candidate as a benchmark instance (options kept as written)."""
    scen = _n(v.get("scenario"))
    subj_opts, tgt_opts = options(v.get("subject_options")), options(v.get("target_options"))
    said = f"{rec.get('speaker') or '?'}: {rec['text']}"
    transcript = "\n".join([*_context_lines(rec), said]) if rec["modality"] == "video_text" else None
    return {
        "id": rec["id"],
        "source": rec["source"],
        "modality": rec["modality"],
        "text": rec["text"],
        "transcript": transcript,
        "media": list(rec["media"]),
        "scenario": scen,
        "domain": _canonical(v.get("domain"), tax.domains),
        "culture": _canonical(v.get("culture"), tax.cultures),
        "subject_options": subj_opts,
        "target_options": tgt_opts,
        "subject": _canonical(v.get("subject"), subj_opts),
        "target": _canonical(v.get("target"), tgt_opts),
        "mechanism": _canonical(v.get("mechanism"), tax.mechanism_names(scen)),
        "label": _canonical(v.get("label"), tax.label_names(scen)),
    }


@dataclass
class Returned:
    """Everything that came back, keyed by candidate id."""

    annotations: dict[str, list[Version]] = field(default_factory=dict)
    reviews: dict[str, Version] = field(default_factory=dict)
    evidence_rejected: dict[str, bool] = field(default_factory=dict)
    decisions: dict[str, tuple[str, Version, str]] = field(default_factory=dict)  # decision, arbiter's version, reason


def _bad(path: str | Path, line: int, message: str, field: str) -> DataError:
    """A returned sheet's error, naming the sheet, the row's line and the column."""
    return DataError(str(path), message, record=f"line {line}", field=field)


def _known(cid: str, pool_ids: set[str], path: str, line: int) -> None:
    if not cid:
        raise _bad(path, line, "empty id", "id")
    if cid not in pool_ids:
        raise _bad(path, line, f"id {cid!r} is not in the candidate pool", "id")


def read_annotations(paths: Sequence[str | Path], pool_ids: set[str], into: Returned) -> None:
    """Each returned annotator sheet's versions into ``into`` (one sheet given twice is refused)."""
    distinct_sheets(("--annotations", p) for p in paths)
    for path in paths:
        for line, row in read_sheet(path, ("id", "annotator") + ANNOTATION_FIELDS):
            cid, who = row["id"], row["annotator"]
            _known(cid, pool_ids, str(path), line)
            if not who:
                raise _bad(path, line, f"empty: who annotated {cid!r}?", "annotator")
            if not row["discard_reason"] and not any(row[f] for f in TUPLE_FIELDS):
                continue  # not annotated yet: reported as such when the benchmark is built
            versions = into.annotations.setdefault(cid, [])
            if any(v.who == who for v in versions):
                raise _bad(path, line, f"annotator {who!r} annotated {cid!r} twice", "annotator")
            versions.append(Version(who, "annotator", {f: row[f] for f in ANNOTATION_FIELDS}, f"{path}:{line}"))


def read_reviews(paths: Sequence[str | Path], pool_ids: set[str], into: Returned) -> None:
    distinct_sheets(("--reviews", p) for p in paths)
    for path in paths:
        for line, row in read_sheet(path, ("id", "annotator", "reviewer", "evidence_supported") + REVIEWED_FIELDS):
            cid = row["id"]
            _known(cid, pool_ids, str(path), line)
            if cid in into.reviews:
                raise _bad(path, line, f"{cid!r} reviewed twice", "id")
            annotations = into.annotations.get(cid, [])
            primary = next((v for v in annotations if v.who == row["annotator"]), None)
            if primary is None:
                raise _bad(path, line, f"no annotation by {row['annotator']!r} was returned for {cid!r}", "annotator")
            if not row["reviewer"] or row["reviewer"] == row["annotator"]:
                raise _bad(path, line, "the reviewer must be named and must not be the annotator", "reviewer")
            supported = row["evidence_supported"].lower()
            if supported not in ("yes", "no", ""):
                got = row["evidence_supported"]
                raise _bad(path, line, f"expected yes or no, got {got!r}", "evidence_supported")
            into.reviews[cid] = reviewed(primary, row, row["reviewer"], f"{path}:{line}")
            into.evidence_rejected[cid] = supported == "no"


def read_decisions(path: str | Path | None, pool_ids: set[str], into: Returned) -> None:
    if path is None:
        return
    for line, row in read_sheet(
        path, ("id", "decision", "arbiter", "reason") + TUPLE_FIELDS + OPTION_FIELDS + ("evidence",)
    ):
        cid = row["id"]
        _known(cid, pool_ids, str(path), line)
        decision = row["decision"].lower()
        if decision == "":
            continue  # not arbitrated yet: reported as an unresolved dispute
        if decision not in DECISIONS:
            raise _bad(path, line, f"expected one of {', '.join(DECISIONS)}, got {row['decision']!r}", "decision")
        if decision == "reject" and not row["reason"]:
            raise _bad(path, line, "a rejection needs its reason", "reason")
        if cid in into.decisions:
            raise _bad(path, line, f"{cid!r} decided twice", "id")
        fields = {f: row[f] for f in TUPLE_FIELDS + OPTION_FIELDS + ("evidence",)}
        into.decisions[cid] = (
            decision,
            Version(row["arbiter"] or "arbiter", "arbiter", fields, f"{path}:{line}"),
            row["reason"],
        )


def versions_of(returned: Returned) -> dict[str, list[Version]]:
    """Per candidate: its annotators' versions, then the reviewer's."""
    out = {cid: list(vs) for cid, vs in returned.annotations.items()}
    for cid, rv in returned.reviews.items():
        out.setdefault(cid, []).append(rv)
    return out


def review_sheets(
    pool: Sequence[Mapping[str, Any]], returned: Returned, reviewers: Sequence[str], seed: int
) -> dict[str, list[dict[str, str]]]:
    """Each annotated candidate's first annotation, to a reviewer who did not annotate it."""
    by_id = {r["id"]: r for r in pool}
    ids = sorted(cid for cid, vs in returned.annotations.items() if not vs[0].discarded())
    order = assign(ids, reviewers, 1, seed, role="review")
    sheets: dict[str, list[dict[str, str]]] = {}
    for cid in ids:
        primary = returned.annotations[cid][0]
        annotators = {v.who for v in returned.annotations[cid]}
        k = reviewers.index(order[cid][0])
        rotation = [reviewers[(k + t) % len(reviewers)] for t in range(len(reviewers))]
        choice = next((r for r in rotation if r not in annotators), None)
        if choice is None:
            why = "every reviewer annotated this candidate: name another reviewer"
            raise DataError(primary.source, why, record=cid)
        row = {
            **_info(by_id[cid]),
            "annotator": primary.who,
            "reviewer": choice,
            "annotated_evidence": primary.get("evidence"),
        }
        row.update({f"annotated_{f}": primary.get(f) for f in REVIEWED_FIELDS})
        sheets.setdefault(choice, []).append(row)
    return sheets


def _versions_text(vs: Sequence[Version]) -> str:
    lines = []
    for v in vs:
        if v.discarded():
            lines.append(f"{v.role} {v.who}: discard ({v.get('discard_reason')})")
        else:
            lines.append(f"{v.role} {v.who}: " + "; ".join(f"{f}={v.get(f)}" for f in TUPLE_FIELDS))
    return "\n".join(lines)


def arbitration_rows(pool: Sequence[Mapping[str, Any]], returned: Returned, tax: Taxonomy) -> list[dict[str, str]]:
    """One row per disputed candidate, prefilled with its first annotator's tuple."""
    by_id = {r["id"]: r for r in pool}
    versions = versions_of(returned)
    rows = []
    for cid, found in sorted(find_disputes(versions, returned.evidence_rejected, tax).items()):
        primary = next((v for v in versions[cid] if not v.discarded()), versions[cid][0])
        row = {**_info(by_id[cid]), "disagreements": "; ".join(found), "versions": _versions_text(versions[cid])}
        row.update({f: primary.get(f) for f in TUPLE_FIELDS + OPTION_FIELDS + ("evidence",)})
        rows.append(row)
    return rows


@dataclass
class BuildResult:
    instances: list[dict[str, Any]]
    report: list[dict[str, Any]]
    agreement: dict[str, Any]


def build_benchmark(pool: Sequence[Mapping[str, Any]], returned: Returned, tax: Taxonomy) -> BuildResult:
    """The final instances (sorted by id) and, for every other candidate, why it is not in the benchmark."""
    versions = versions_of(returned)
    disputes = find_disputes(versions, returned.evidence_rejected, tax)
    instances, report = [], []

    def drop(rec: Mapping[str, Any], reason: str, detail: str, **extra: Any) -> None:
        entry = {"id": rec["id"], "source": rec["source"], "stage": "annotation", "reason": reason, "detail": detail}
        report.append({**entry, **extra})

    for rec in sorted(pool, key=lambda r: r["id"]):
        cid = rec["id"]
        vs = versions.get(cid, [])
        if not vs:
            drop(rec, "not_annotated", "no annotation came back for this candidate")
            continue
        chosen: Version | None
        if cid in disputes:
            if cid not in returned.decisions:
                drop(rec, "unresolved_dispute", "; ".join(disputes[cid]), disagreements=disputes[cid])
                continue
            decision, arbiter, reason = returned.decisions[cid]
            if decision == "reject":
                why = reason or "rejected by the arbiter"
                drop(rec, "rejected", why, arbiter=arbiter.who, disagreements=disputes[cid])
                continue
            if decision == "retain":
                chosen = next((v for v in vs if v.role == "annotator" and not v.discarded()), None)
                if chosen is None:
                    drop(rec, "discarded", "retained, but every annotator proposed to discard it: revise it instead")
                    continue
            else:
                chosen = arbiter
        else:
            chosen = vs[0]
        problems = final_problems(chosen, tax)
        if problems:
            why = "; ".join(f"{f}: {p}" for f, p in problems)
            drop(rec, "final_validation", why, fields=dict(problems), version=chosen.source or chosen.who)
            continue
        inst = to_instance(rec, chosen, tax)
        schema_problems = all_problems([inst], tax)[0]
        if schema_problems:  # final validation should have caught it: report, never drop silently
            drop(rec, "final_validation", "; ".join(f"{f}: {p}" for f, p in schema_problems))
            continue
        instances.append(inst)
    summary = agreement_summary(versions)  # versions_of: each candidate's annotators, then its reviewer
    dropped = dict(sorted(Counter(r["reason"] for r in report).items()))
    summary.update(pool=len(pool), instances=len(instances), disputed=len(disputes), dropped_by_reason=dropped)
    return BuildResult(instances, report, summary)
