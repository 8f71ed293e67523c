"""Preprocessing of the MoCA candidate pool (appendix B.1): every candidate is kept (cleaned) or goes to
the filter report with the step and reason that removed it. Steps, in order:

1. text cleaning (``edits``): Unicode repair, markup, links, system artifacts, whitespace; context alike.
2. media: a local file is decoded and hashed (images also a phash): ``corrupted_media``,
   ``missing_media`` (or kept with a flag) and ``invalid_link`` for a bad URL.
3. duplicates: texts with context equal after normalisation (``exact_duplicate``) or of shingle Jaccard
   >= ``near_duplicate_threshold`` (``near_duplicate``), unless both media were decoded and differ. The
   first in pool order is kept; shared media or text among kept ones is only flagged (Hateful Memes'
   benign confounders reuse an image on purpose)."""

from __future__ import annotations

import csv
import html
import io
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socialbench.core.errors import ConfigError
from socialbench.core.hashing import sha256_file, sha256_json
from socialbench.core.paths import special_file
from socialbench.media.errors import MediaError
from socialbench.media.images import ImageUnreadable, verify_image_file
from socialbench.media.probe import probe, require_video
from socialbench.results.tracking import open_tracking_store, sqlite_store_path

STAGE = "preprocess"
#: Removal reasons of this stage, in step order (the count table's columns).
REASONS = tuple(
    (
        "empty_text markup_only link_only system_artifact invalid_link missing_media corrupted_media "
        "exact_duplicate near_duplicate"
    ).split()
)
#: What a text removed for being only markup, a link or a system artifact was.
EMPTIED = {"markup_only": "markup", "link_only": "a link", "system_artifact": "a system artifact"}
#: Flags on kept records (counted in the table too).
FLAGS = ("media_missing", "media_remote", "shares_media_with", "shares_text_with")

#: How much lower than near_duplicate_threshold the LSH proposes candidate pairs.
LSH_SLACK = 0.3

DEFAULT_PLACEHOLDERS = tuple(
    (
        "<user> <url> <num> <number> <hashtag> <email> <phone> <money> <date> <time> <percent> <mention> "
        "[deleted] [removed] [link] [url] [image] [video]"
    ).split()
)


def known_keys(where: str, raw: Mapping[str, Any] | None, known: Iterable[str]) -> dict[str, Any]:
    """A copy of a params block; a key not in ``known`` is a ConfigError naming ``where``."""
    raw, known = dict(raw or {}), set(known)
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return raw


@dataclass(frozen=True)
class PreprocessParams:
    """``moca.preprocess`` in params.yaml."""

    near_duplicate_threshold: float = 0.8
    minhash_permutations: int = 128
    shingle_chars: int = 5
    phash_max_distance: int = 4
    missing_media: str = "drop"  # drop | keep
    placeholders: tuple[str, ...] = DEFAULT_PLACEHOLDERS

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> PreprocessParams:
        raw = known_keys("moca.preprocess", raw, cls.__dataclass_fields__)
        if "placeholders" in raw:
            raw["placeholders"] = tuple(raw["placeholders"])
        p = cls(**raw)
        if not 0 < p.near_duplicate_threshold <= 1:
            raise ConfigError(
                f"moca.preprocess.near_duplicate_threshold: {p.near_duplicate_threshold} is not in (0, 1]"
            )
        if p.missing_media not in ("drop", "keep"):
            raise ConfigError(f"moca.preprocess.missing_media: {p.missing_media!r} is not drop or keep")
        if p.minhash_permutations < 16 or p.shingle_chars < 1 or not 0 <= p.phash_max_distance < 64:
            why = "minhash_permutations >= 16, shingle_chars >= 1, 0 <= phash_max_distance < 64"
            raise ConfigError(f"moca.preprocess: {why}")
        return p


# ---- Text cleaning (pure) ------------------------------------------------------------------------
_HTML_TAGS = (
    "a|abbr|b|blockquote|br|code|del|div|em|font|h[1-6]|hr|i|img|li|ol|p|pre|s|small|span|strike|strong|sub|sup|"
    "table|td|th|tr|u|ul"
)
_TAG = re.compile(rf"</?(?:{_HTML_TAGS})(?:\s[^<>]*)?/?>", re.I)
_MD_LINK = re.compile(r"\[([^\[\]]+)\]\((?:https?://|www\.)[^)\s]*\)")
_MD_EMPHASIS = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1")
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"]+|\b[a-z0-9.-]+\.(?:com|org|net|ly|co|io|be|gl|me|tv)/[^\s<>\"]*", re.I)
_MACROMAN_APOSTROPHE = re.compile(r"(?<=[A-Za-z])Õ(?=[A-Za-z])")
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Cleaned:
    text: str
    edits: tuple[str, ...]
    emptied_by: str | None  # the reason when the cleaning left nothing (None: text remains, or it was empty)


def _placeholder_pattern(placeholders: Sequence[str]) -> re.Pattern[str] | None:
    if not placeholders:
        return None
    alts = "|".join(re.escape(p) for p in sorted(placeholders, key=len, reverse=True))
    return re.compile(rf"(?:{alts})", re.I)


def clean_text(text: str, placeholders: Sequence[str] = DEFAULT_PLACEHOLDERS) -> Cleaned:
    """The text with its artifacts removed, the edits made, and which step emptied it (emojis, hashtags kept)."""
    import ftfy

    edits: list[str] = []
    emptied_by = None

    def step(name: str, new: str, reason: str) -> str:
        nonlocal emptied_by
        if new != current:
            edits.append(name)
            if current.strip() and not new.strip() and emptied_by is None:
                emptied_by = reason
        return new

    if not text.strip():
        return Cleaned("", ("whitespace",) if text else (), "empty_text")
    current = text
    # Repair only: curly quotes and full-width forms are how the author wrote, not corruption.
    fixed = ftfy.fix_text(
        current, unescape_html=False, uncurl_quotes=False, fix_character_width=False, normalization="NFC"
    )
    current = step("unicode", _MACROMAN_APOSTROPHE.sub("\u2019", fixed), "empty_text")
    unmarked = _MD_EMPHASIS.sub(r"\2", _MD_LINK.sub(r"\1", _TAG.sub(" ", html.unescape(current))))
    current = step("markup", unmarked, "markup_only")
    current = step("links", _URL.sub(" ", current), "link_only")
    pattern = _placeholder_pattern(placeholders)
    if pattern is not None:
        current = step("system_artifacts", pattern.sub(" ", current), "system_artifact")
    current = step("whitespace", _WS.sub(" ", current).strip(), "empty_text")
    return Cleaned(current, tuple(edits), emptied_by if not current else None)


def dedup_key(text: str) -> str:
    """What exact duplicates share: NFKC, case-folded, punctuation but ``#@`` dropped, whitespace collapsed."""
    s = unicodedata.normalize("NFKC", text).casefold()
    s = "".join(ch if not unicodedata.category(ch).startswith("P") or ch in "#@" else " " for ch in s)
    return _WS.sub(" ", s).strip()


def shingles(key: str, k: int) -> set[str]:
    return {key[i : i + k] for i in range(len(key) - k + 1)} if len(key) > k else {key}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def signature_text(rec: Mapping[str, Any]) -> str:
    """The text that identifies a candidate for deduplication: its dialogue context, then its text."""
    return " ".join([c["text"] for c in rec.get("context", [])] + [rec["text"]])


# ---- Media (I/O) ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MediaInfo:
    path: str
    kind: str  # image | video
    sha256: str
    phash: str | None = None
    width: int | None = None
    height: int | None = None
    duration: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


class MediaProblem(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def is_valid_url(url: str) -> bool:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in url


def inspect_media(path: Path, modality: str) -> MediaInfo:
    """Decode and hash one local media file; MediaProblem('corrupted_media', why) if it cannot be read."""
    if modality == "image_text":
        import imagehash
        from PIL import Image

        try:
            verify_image_file(path)
            with Image.open(path) as img:
                img.load()
                width, height = img.size
                phash = str(imagehash.phash(img.convert("RGB")))
        except (ImageUnreadable, OSError, ValueError) as exc:
            raise MediaProblem("corrupted_media", str(exc)) from exc
        return MediaInfo(str(path), "image", sha256_file(path), phash=phash, width=width, height=height)
    try:
        info = probe(path)
        stream = require_video(info)
    except MediaError as exc:
        raise MediaProblem("corrupted_media", str(exc)) from exc
    return MediaInfo(
        str(path), "video", sha256_file(path), width=stream.width, height=stream.height, duration=info.duration
    )


def check_media(rec: Mapping[str, Any]) -> tuple[list[MediaInfo], list[str], MediaProblem | None]:
    """(decoded media, flags, problem); a missing file falls back to the record's URLs or is ``missing_media``."""
    infos, flags = [], []
    for url in rec.get("media_urls", []):
        if not is_valid_url(url):
            return [], [], MediaProblem("invalid_link", f"media URL {url!r} is not a well-formed http(s) URL")
    missing = []
    for m in rec["media"]:
        p = Path(m)
        if p.is_file():
            try:
                infos.append(inspect_media(p, rec["modality"]))
            except MediaProblem as problem:
                return [], [], problem
        elif p.is_dir():
            return [], [], MediaProblem("corrupted_media", f"{m} is a folder, not a media file")
        elif (kind := special_file(p)) is not None:  # there, but not a file: never opened (a FIFO would hang)
            return [], [], MediaProblem("corrupted_media", f"{m} is {kind}, not a media file; it was not opened")
        else:
            missing.append(m)
    if not rec["media"] and not rec.get("media_urls"):
        return [], [], MediaProblem("missing_media", "the record names no media file or URL")
    if missing or not rec["media"]:
        if rec.get("media_urls"):
            flags.append("media_remote")
        detail = (f"not found: {', '.join(missing)}" if missing else "no local media file") + (
            f" (URL: {', '.join(rec['media_urls'])})" if rec.get("media_urls") else ""
        )
        return infos, flags, MediaProblem("missing_media", detail)
    return infos, flags, None


# ---- Duplicates (pure) ---------------------------------------------------------------------------


def _media_relation(
    a: Sequence[Mapping[str, Any]] | None, b: Sequence[Mapping[str, Any]] | None, max_distance: int
) -> str:
    """identical | similar | unknown | different, for two records' decoded media (None: not decoded)."""
    if not a or not b:
        return "unknown"
    if [m["sha256"] for m in a] == [m["sha256"] for m in b]:
        return "identical"
    if len(a) == len(b) and all(x.get("phash") and y.get("phash") for x, y in zip(a, b)):
        if all(phash_distance(x["phash"], y["phash"]) <= max_distance for x, y in zip(a, b)):
            return "similar"
    return "different"


def phash_distance(a: str, b: str) -> int:
    return bin(int(a, 16) ^ int(b, 16)).count("1")


@dataclass
class Duplicate:
    index: int
    of: int
    reason: str  # exact_duplicate | near_duplicate
    similarity: float
    media: str


def find_duplicates(
    texts: Sequence[str], media: Sequence[Sequence[Mapping[str, Any]] | None], params: PreprocessParams
) -> list[Duplicate]:
    """Each later record whose text matches an earlier *kept* one and whose media do not tell them apart."""
    from datasketch import MinHash, MinHashLSH

    keys = [dedup_key(t) for t in texts]
    sets = [shingles(k, params.shingle_chars) for k in keys]
    template = MinHash(num_perm=params.minhash_permutations, seed=1)
    # The LSH (an estimate) proposes pairs at a looser threshold than the exact Jaccard that decides.
    lsh = MinHashLSH(
        threshold=max(0.05, params.near_duplicate_threshold - LSH_SLACK), num_perm=params.minhash_permutations
    )
    first_of_key: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        first_of_key.setdefault(key, []).append(i)
    hashes: dict[str, Any] = {}
    for key, members in first_of_key.items():  # one MinHash per distinct text
        mh = MinHash(num_perm=params.minhash_permutations, permutations=template.permutations, scheme=template.scheme)
        mh.update_batch([s.encode("utf-8") for s in sorted(sets[members[0]])])
        hashes[key] = mh
        lsh.insert(key, mh)
    removed: dict[int, Duplicate] = {}
    for i, key in enumerate(keys):
        candidates = [j for j in first_of_key[key] if j < i]
        near_keys = sorted(k for k in lsh.query(hashes[key]) if k != key)
        near = sorted(j for k in near_keys for j in first_of_key[k] if j < i)
        best = None
        for j in candidates + near:
            if j in removed:
                continue
            exact = keys[j] == key
            sim = 1.0 if exact else jaccard(sets[i], sets[j])
            if not exact and sim < params.near_duplicate_threshold:
                continue  # an LSH false positive
            relation = _media_relation(media[i], media[j], params.phash_max_distance)
            if relation == "different":
                continue
            reason = "exact_duplicate" if exact and relation in ("identical", "unknown") else "near_duplicate"
            if best is None or j < best.of:
                best = Duplicate(i, j, reason, round(sim, 4), relation)
        if best is not None:
            removed[i] = best
    return [removed[i] for i in sorted(removed)]


def shared_media_groups(media: Sequence[Sequence[Mapping[str, Any]] | None], max_distance: int) -> dict[int, list[int]]:
    """For each record, the others with identical (sha256) or near (pHash within ``max_distance`` bits)
    media; by pigeonhole two hashes within d bits agree on one of d + 1 bands, so only band collisions are compared."""
    out: dict[int, set[int]] = {}
    by_sha: dict[tuple[str, ...], list[int]] = {}
    bands: dict[tuple[int, str], list[int]] = {}
    nbands = max_distance + 1
    for i, ms in enumerate(media):
        if not ms:
            continue
        by_sha.setdefault(tuple(m["sha256"] for m in ms), []).append(i)
        if len(ms) == 1 and ms[0].get("phash"):
            bits = bin(int(ms[0]["phash"], 16))[2:].zfill(64)
            size = -(-64 // nbands)
            for b in range(nbands):
                bands.setdefault((b, bits[b * size : (b + 1) * size]), []).append(i)
    for group in by_sha.values():
        for i in group:
            out.setdefault(i, set()).update(j for j in group if j != i)
    for group in bands.values():
        for x in range(len(group)):
            for y in range(x + 1, len(group)):
                i, j = group[x], group[y]
                if phash_distance(media[i][0]["phash"], media[j][0]["phash"]) <= max_distance:
                    out.setdefault(i, set()).add(j)
                    out.setdefault(j, set()).add(i)
    return {i: sorted(js) for i, js in out.items() if js}


# ---- The stage -----------------------------------------------------------------------------------


@dataclass
class FilterResult:
    kept: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)


def removal(rec: Mapping[str, Any], stage: str, reason: str, detail: str, **extra: Any) -> dict[str, Any]:
    """A filter-report entry: the record as it was when removed, and why."""
    return {
        "id": rec["id"],
        "source": rec["source"],
        "stage": stage,
        "reason": reason,
        "detail": detail,
        **extra,
        "record": dict(rec),
    }


def preprocess(
    records: Sequence[Mapping[str, Any]], params: PreprocessParams, *, inspect: Any = check_media
) -> FilterResult:
    """Run the module docstring's steps over the pool in order (``inspect``: tests pass a double)."""
    result = FilterResult()
    survivors: list[dict[str, Any]] = []
    for rec in records:
        cleaned = clean_text(rec["text"], params.placeholders)
        if not cleaned.text:
            reason = cleaned.emptied_by or "empty_text"
            what = "the text is empty" if reason == "empty_text" else f"the text was only {EMPTIED[reason]}"
            result.removed.append(removal(rec, STAGE, reason, f"{what}: {rec['text'][:120]!r}"))
            continue
        new = dict(rec)
        edits = list(cleaned.edits)
        new["text"] = cleaned.text
        context = []
        for c in rec.get("context", []):
            cc = clean_text(c["text"], params.placeholders)
            edits += [f"context.{e}" for e in cc.edits]
            context.append({"speaker": c["speaker"], "text": cc.text})
        new["context"] = [c for c in context if c["text"]]
        new["edits"] = sorted(set(edits))
        if cleaned.text != rec["text"]:
            new["text_before_cleaning"] = rec["text"]
        infos, flags, problem = inspect(new)
        if problem is not None and not (problem.reason == "missing_media" and params.missing_media == "keep"):
            result.removed.append(removal(new, STAGE, problem.reason, problem.detail))
            continue
        if problem is not None:
            flags = sorted(set(flags) | {"media_missing"})
        new["media_info"] = (
            [m.as_dict() if isinstance(m, MediaInfo) else dict(m) for m in infos] if problem is None else []
        )
        new["flags"] = {f: True for f in flags}
        survivors.append(new)
    media = [r["media_info"] or None for r in survivors]
    dups = {d.index: d for d in find_duplicates([signature_text(r) for r in survivors], media, params)}
    kept_idx = [i for i in range(len(survivors)) if i not in dups]
    for i, d in dups.items():
        of = survivors[d.of]["id"]
        detail = f"duplicate of {of} (text similarity {d.similarity}, media {d.media})"
        result.removed.append(removal(survivors[i], STAGE, d.reason, detail, duplicate_of=of))
    # Flags among the kept: shared media (different text, else it would be a duplicate) and shared text.
    kept_media = [media[i] for i in kept_idx]
    for pos, others in shared_media_groups(kept_media, params.phash_max_distance).items():
        survivors[kept_idx[pos]]["flags"]["shares_media_with"] = [survivors[kept_idx[o]]["id"] for o in others]
    by_key: dict[str, list[int]] = {}
    for i in kept_idx:
        by_key.setdefault(dedup_key(signature_text(survivors[i])), []).append(i)
    for group in by_key.values():
        if len(group) > 1:
            for i in group:
                survivors[i]["flags"]["shares_text_with"] = [survivors[j]["id"] for j in group if j != i]
    result.kept = [survivors[i] for i in kept_idx]
    result.removed.sort(key=lambda e: e["id"])
    return result


# ---- Counts per source and reason (pure) ---------------------------------------------------------


def count_table(
    pool: Iterable[Mapping[str, Any]], result: FilterResult, reasons: Sequence[str], flags: Sequence[str] = FLAGS
) -> list[dict[str, Any]]:
    """Per source and in total: pool, removed per reason, kept and flagged; nothing may vanish."""
    pool_ids = {r["id"]: r["source"] for r in pool}
    accounted = [r["id"] for r in result.kept] + [e["id"] for e in result.removed]
    if sorted(accounted) != sorted(pool_ids) or len(set(accounted)) != len(accounted):
        lost = sorted(set(pool_ids) - set(accounted))[:5]
        raise AssertionError(f"filtering lost or duplicated records (e.g. {lost}): kept + removed must equal the pool")
    rows = []
    for src in [*sorted(set(pool_ids.values())), "total"]:

        def mine(source: str, src: str = src) -> bool:
            return src == "total" or source == src

        row: dict[str, Any] = {"source": src, "pool": sum(1 for s in pool_ids.values() if mine(s))}
        for reason in reasons:
            row[reason] = sum(1 for e in result.removed if e["reason"] == reason and mine(e["source"]))
        row["kept"] = sum(1 for r in result.kept if mine(r["source"]))
        for flag in flags:
            row[f"flag:{flag}"] = sum(1 for r in result.kept if mine(r["source"]) and r.get("flags", {}).get(flag))
        rows.append(row)
    unknown = sorted({e["reason"] for e in result.removed} - set(reasons))
    if unknown:
        raise AssertionError(f"removal reasons without a column: {unknown}")
    return rows


def counts_markdown(rows: Sequence[Mapping[str, Any]], title: str) -> str:
    cols = list(rows[0]) if rows else ["source"]
    head = "| " + " | ".join(cols) + " |"
    sep = "|---|" + "---:|" * (len(cols) - 1)
    body = ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join([f"### {title}", "", head, sep, *body]) + "\n"


def counts_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return buf.getvalue()


def log_counts_mlflow(
    rows: Sequence[Mapping[str, Any]],
    stage: str,
    tracking_uri: str,
    settings: Mapping[str, Any],
    experiment: str = "socialbench",
    artifact_root: str = "mlartifacts",
) -> str:
    """Log a count table as one MLflow run, once per content (counts and settings); returns the run id."""
    import os

    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    from filelock import FileLock
    from mlflow.entities import Metric, Param

    plain = {k: list(v) if isinstance(v, tuple) else v for k, v in settings.items()}
    key = sha256_json({"stage": stage, "rows": [dict(r) for r in rows], "settings": plain})
    db = sqlite_store_path(tracking_uri)
    with FileLock(str(db if db is not None else ".mlflow") + ".lock", timeout=600):
        client, exp = open_tracking_store(tracking_uri, experiment)
        where = Path(artifact_root).resolve().as_uri()  # as socialbench track creates the experiment
        exp_id = exp.experiment_id if exp is not None else client.create_experiment(experiment, artifact_location=where)
        for run in client.search_runs([exp_id], filter_string=f"tags.`socialbench.filter_key` = '{key}'"):
            if run.info.status == "FINISHED":
                return run.info.run_id
        run = client.create_run(
            exp_id,
            run_name=f"moca-{stage}-counts",
            tags={"socialbench.core.benchmarks": "moca", "socialbench.stage": stage, "socialbench.filter_key": key},
        )
        metrics = [
            Metric(f"{row['source']}.{col.replace(':', '.')}", float(value), 0, 0)
            for row in rows
            for col, value in row.items()
            if col != "source"
        ]
        params = [Param(k, str(v)[:500]) for k, v in sorted(plain.items())]
        client.log_batch(run.info.run_id, metrics=metrics, params=params)
        client.set_terminated(run.info.run_id)
        return run.info.run_id
