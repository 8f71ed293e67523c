"""``socialbench moca ...``: MoCA's own stage commands, each with explicit paths (mounted on the main
app by ``socialbench.cli``)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import typer

from socialbench.core.errors import SocialbenchError

#: moca.sources.SOURCE_NAMES, spelled out: importing the sources is too slow for every command's start.
SOURCES_HELP = "mustard, mintrec, redcaps, mmsd2, hateful_memes, multimet, memecap, instagram, supplementary"

_GROUP = {"no_args_is_help": True, "add_completion": False, "pretty_exceptions_enable": False}
app = typer.Typer(**_GROUP, help="MoCA's own stages: frames (sampled frames of video-text instances).")
Opt = typer.Option
#: What every record of a candidate pool has.
POOL_FIELDS = ("id", "source", "modality", "text", "media")


@app.callback()
def _group() -> None:
    """MoCA's own stages (the shared ones are `socialbench prepare/infer/score/... --benchmark moca`)."""


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def check_media_roots(records: list[dict], roots, source: Path) -> None:
    """A DataError naming file, instance and field for a media path outside the allowed folders."""
    from socialbench.core.errors import DataError

    for n, rec in enumerate(records, 1):
        media = rec.get("media")
        for m in media if isinstance(media, list) else []:
            why = roots.problem(m) if isinstance(m, str) else None
            if why:
                raise DataError(str(source), why, record=str(rec.get("id", f"record {n}")), field="media")


@app.command("frames")
def frames(
    inputs: list[Path] = Opt(..., "--input", help="validated instances, data/interim/moca/<split>.jsonl (repeatable)"),
    outputs: list[Path] = Opt(
        ..., "--output", help="instances with frames, data/processed/moca/<split>.jsonl (one per --input, same order)"
    ),
    report: Path = Opt(Path("results/reports/media.jsonl"), help="media problems, one JSON line each"),
    report_md: Path = Opt(Path("results/reports/media.md"), help="readable media report"),
    frames_dir: Path = Opt(Path("data/interim/frames"), help="content-addressed frame cache"),
    params: Path = Opt(Path("params.yaml"), help="params file (media section)"),
    on_error: str | None = Opt(None, help="skip | fail (default: media.on_error)"),
    root: Path = Opt(Path("."), help="repository root; instance media paths are relative to it"),
    prune: bool = Opt(
        False,
        help=(
            "afterwards, remove frame-cache entries these instances do not use (and what killed runs left in its .tmp/)"
        ),
    ),
    index: Path | None = Opt(
        None,
        help="last, write the JSON index of the frame-cache entries the processed instances name (sorted keys,"
        " frame count; same entries, same bytes); the pipeline writes data/interim/frames/index.json, the rule's"
        " output for the cache",
    ),
) -> None:
    """Add sampled frames to MoCA video-text instances; bad media is skipped or fails (media.on_error)."""
    from socialbench.core.config import load_params
    from socialbench.core.io import read_jsonl, write_jsonl
    from socialbench.core.paths import MediaRoots, check_io
    from socialbench.media.cache import FrameCache
    from socialbench.media.errors import MediaError
    from socialbench.media.report import MediaReport
    from socialbench.media.settings import MediaSettings
    from socialbench.moca.dataset.media import KEPT, attach_frames, moca_sampling

    _logging()
    if len(inputs) != len(outputs):
        raise SocialbenchError(f"{len(inputs)} --input but {len(outputs)} --output: give one output per input")
    outs = {
        "--output": outputs,
        "--report": report,
        "--report-md": report_md,
        "--index": index,
        "--frames-dir": frames_dir,
    }
    check_io({"--input": inputs, "--params": params}, outs, folders=("--frames-dir",))
    p = load_params(params)
    settings = MediaSettings.from_params(p)
    roots = MediaRoots.from_params(p, root)
    policy = on_error or settings.on_error
    if policy not in ("skip", "fail"):
        raise SocialbenchError(f"--on-error must be skip or fail, got {policy!r}")
    sampling = moca_sampling(settings, p["moca"]["frames"])
    cache = FrameCache(frames_dir)
    rep = MediaReport(settings={"on_error": policy, **{f"sampling.{k}": v for k, v in sampling.key().items()}})
    results = []
    try:
        loaded = [(src, dst, read_jsonl(src)) for src, dst in zip(inputs, outputs)]
        for src, _, recs in loaded:
            check_media_roots(recs, roots, src)
        how = {"cache": cache, "sampling": sampling, "report": rep, "on_error": policy, "root": root}
        for src, dst, recs in loaded:
            results.append((dst, attach_frames(recs, split=src.stem, source=str(src), **how)))
    except MediaError:
        rep.write(report, report_md)
        raise
    for dst, recs in results:
        write_jsonl(dst, recs)
    rep.write(report, report_md)
    if prune:
        cache.prune(cache.used)
    if index is not None:  # last: an index on disk means the processed files and the cache are complete
        cache.write_index(index, cache.used)
    marked = sum(p.action == KEPT for p in rep.problems)
    framed = sum(c.with_frames for c in rep.counts.values())
    kept = f"{marked} kept with media_error, scored invalid (see {report_md})"
    cached = f"frame cache: {cache.hits} hit(s), {cache.misses} extracted"
    typer.echo(f"moca frames: {framed} video instance(s) with frames, {kept}; {cached}")


def _moca_section(params: Path | None) -> dict:
    from socialbench.core.config import load_params

    return load_params(params).get("moca", {}) if params is not None else {}


def _source_options(
    name: str, params: Path | None, mode: str | None, mirror: Path | None, media: bool | None, splits: list[str] | None
):
    from socialbench.moca.dataset.sources import SourceOptions, get_source

    get_source(name)  # an unknown name is an error before params are read
    raw = dict(_moca_section(params).get("sources", {}).get(name) or {})
    given = {"mode": mode, "mirror": str(mirror) if mirror else None, "media": media, "splits": splits or None}
    raw.update({k: v for k, v in given.items() if v is not None})
    return SourceOptions.from_mapping(name, raw)


def _filter(stage: str, inputs: list[Path], out: Path, report: Path, counts: tuple, params, mlflow: bool, how) -> None:
    """A filter stage (``how``: its Params class, filter function, reasons, flags and title): filter the
    pool, write kept and removed records and the optional count tables, and with ``mlflow`` log the counts."""
    from socialbench.core.io import write_json, write_jsonl, write_text_atomic
    from socialbench.core.paths import check_io
    from socialbench.moca.dataset.preprocess import count_table, counts_csv, counts_markdown

    params_cls, run, reasons, flags, title = how
    md, csv_path, json_path = counts
    outs = {"--out": out, "--report": report, "--counts-md": md, "--counts-csv": csv_path, "--counts-json": json_path}
    check_io({"--input": inputs, "--params": params}, outs)
    if stage == "preprocess":
        _logging()
    settings = params_cls.from_mapping(_moca_section(params).get(stage))
    pool = _read_pool(inputs, candidates=stage == "preprocess")
    result = run(pool, settings)
    rows = count_table(pool, result, reasons, flags)
    write_jsonl(out, result.kept)
    write_jsonl(report, result.removed)
    if md is not None:
        write_text_atomic(md, counts_markdown(rows, title))
    if csv_path is not None:
        write_text_atomic(csv_path, counts_csv(rows))
    if json_path is not None:
        write_json(json_path, {r["source"]: {k: v for k, v in r.items() if k != "source"} for r in rows})
    if mlflow:
        _log_counts(rows, stage, params, settings.__dict__)
    kept, removed = len(result.kept), len(result.removed)
    typer.echo(f"moca {stage}: {len(pool)} candidate(s), {kept} kept, {removed} removed (see {report})")


def _read_pool(paths: list[Path], candidates: bool = False) -> list[dict]:
    """Records of JSON-lines files in order (pool order decides which duplicate is kept); a duplicate id
    names both files. ``candidates``: each file must pass the candidate schema, else have POOL_FIELDS."""
    from socialbench.core.errors import DataError
    from socialbench.core.io import read_jsonl
    from socialbench.moca.dataset.sources.base import validate_candidates

    out, seen = [], {}
    for path in paths:
        records = read_jsonl(path)
        if candidates:
            validate_candidates(records, str(path))
        for n, rec in enumerate(records, 1):
            missing = [f for f in POOL_FIELDS if f not in rec]
            if missing:
                raise DataError(str(path), "missing", record=str(rec.get("id", f"record {n}")), field=missing[0])
            rid = rec.get("id")
            if not isinstance(rid, str) or not rid:
                raise DataError(str(path), "expected a record id", record=f"record {n}", field="id")
            if rid in seen:
                raise DataError(str(path), f"duplicate id, also in {seen[rid]}", record=rid, field="id")
            seen[rid] = str(path)
            out.append(rec)
    return out


def _log_counts(rows, stage: str, params: Path | None, settings: dict) -> None:
    from socialbench.core.config import load_params
    from socialbench.moca.dataset.preprocess import log_counts_mlflow
    from socialbench.results.tracking_uri import tracking_store_uri

    if params is None:
        raise SocialbenchError("--mlflow needs --params (its mlflow section names the store and the experiment)")
    p = load_params(params)
    log_counts_mlflow(rows, stage, tracking_store_uri(p), settings, p["mlflow"]["experiment"])


@app.command("sources")
def sources_cmd(name: str | None = typer.Argument(None, help="one source (default: all)")) -> None:
    """List MoCA's raw sources: official locations, pinned hashes, and the manual steps where needed."""
    from socialbench.moca.dataset.sources import SOURCE_NAMES, get_source
    from socialbench.moca.dataset.sources.base import describe

    for n in [name] if name else SOURCE_NAMES:
        typer.echo(describe(get_source(n)) + "\n")


@app.command("acquire")
def acquire_cmd(
    source: str = Opt(..., help="source name (socialbench moca sources), one of: " + SOURCES_HELP),
    root: Path = Opt(..., help="the source's folder, e.g. data/raw/moca_sources/<source>"),
    params: Path | None = Opt(None, help="params file: moca.sources.<source> gives the options below"),
    mode: str | None = Opt(None, help="download | mirror | manual (overrides params)"),
    mirror: Path | None = Opt(None, help="local folder with the source's files, for mode mirror"),
    media: bool | None = Opt(None, "--media/--no-media", help="also acquire the media"),
    split: list[str] | None = Opt(None, "--split", help="source split to acquire (repeatable; default all)"),
) -> None:
    """Put a source's files under ROOT (download, mirror or manual; verified) and write its manifest."""
    from socialbench.core.paths import check_io
    from socialbench.moca.dataset.sources import get_source
    from socialbench.moca.dataset.sources.base import MANIFEST, acquire

    check_io({"--params": params, "--mirror": mirror}, {"--root": root}, folders=("--mirror", "--root"))
    _logging()
    options = _source_options(source, params, mode, mirror, media, split)
    from socialbench.acquire.archive import ArchiveLimits
    from socialbench.acquire.download import TrustStore
    from socialbench.core.config import load_params

    limits = ArchiveLimits.from_params(load_params(params)) if params is not None else None
    manifest = acquire(get_source(source), root, options, limits=limits, trust=TrustStore())  # sources.lock, here
    n = len(manifest["files"])
    typer.echo(f"moca acquire {source}: {n} file(s) under {root} ({options.mode}); {root / MANIFEST}")


@app.command("candidates")
def candidates_cmd(
    source: str = Opt(..., help="source name, one of: " + SOURCES_HELP),
    root: Path = Opt(..., help="the source's folder (as acquired)"),
    out: Path = Opt(..., help="normalized candidate records, JSON lines"),
    params: Path | None = Opt(None, help="params file (moca.sources.<source>: splits, encoding, columns, include)"),
    split: list[str] | None = Opt(None, "--split", help="source split to read (repeatable; default: params, else all)"),
) -> None:
    """Read a source's files into normalized candidate records (validated with the candidate schema)."""
    from socialbench.core.io import write_jsonl
    from socialbench.core.paths import check_io
    from socialbench.moca.dataset.sources import read_source

    check_io({"--root": root, "--params": params}, {"--out": out}, folders=("--root",))
    options = _source_options(source, params, None, None, None, split)
    records = read_source(source, root, options)
    write_jsonl(out, records)
    typer.echo(f"moca candidates {source}: {len(records)} record(s) -> {out}")


@app.command("preprocess")
def preprocess_cmd(
    inputs: list[Path] = Opt(..., "--input", help="candidate files (repeatable; their order is the pool order)"),
    out: Path = Opt(..., help="kept, cleaned candidates (JSON lines)"),
    report: Path = Opt(..., help="removed candidates with stage, reason and detail (JSON lines)"),
    counts_md: Path | None = Opt(None, help="counts per source and reason, Markdown"),
    counts_csv: Path | None = Opt(None, help="counts per source and reason, CSV"),
    counts_json: Path | None = Opt(None, help="counts per source and reason, JSON (a DVC metrics file)"),
    params: Path | None = Opt(None, help="params file (moca.preprocess)"),
    mlflow: bool = Opt(
        False, "--mlflow/--no-mlflow", help="also log the counts to MLflow (the params file's mlflow section)"
    ),
) -> None:
    """Preprocessing (appendix B.1): clean texts, check media, remove duplicates (REPORT: the removed)."""
    from socialbench.moca.dataset.preprocess import FLAGS, REASONS, PreprocessParams, preprocess

    title = "Preprocessing (B.1): candidates removed per source and reason"
    how = (PreprocessParams, preprocess, REASONS, FLAGS, title)
    _filter("preprocess", inputs, out, report, (counts_md, counts_csv, counts_json), params, mlflow, how)


@app.command("unimodal")
def unimodal_cmd(
    input: Path = Opt(..., "--input", help="preprocessed candidates"),
    out: Path = Opt(..., help="candidates that pass (JSON lines)"),
    report: Path = Opt(..., help="removed candidates with reason and detail (JSON lines)"),
    counts_md: Path | None = Opt(None, help="counts per source and reason, Markdown"),
    counts_csv: Path | None = Opt(None, help="counts per source and reason, CSV"),
    counts_json: Path | None = Opt(None, help="counts per source and reason, JSON"),
    params: Path | None = Opt(None, help="params file (moca.unimodal)"),
    mlflow: bool = Opt(
        False, "--mlflow/--no-mlflow", help="also log the counts to MLflow (the params file's mlflow section)"
    ),
) -> None:
    """Unimodal consistency filtering (appendix B.1.1, defined in docs/moca-sources.md)."""
    from socialbench.moca.dataset.unimodal import FLAGS, REASONS, UnimodalParams, unimodal_filter

    title = "Unimodal consistency filtering (B.1.1): candidates removed per source and reason"
    how = (UnimodalParams, unimodal_filter, REASONS, FLAGS, title)
    _filter("unimodal", [input], out, report, (counts_md, counts_csv, counts_json), params, mlflow, how)


annotate_app = typer.Typer(**_GROUP, help="The annotation round-trip (B.2-B.3): export, review, arbitration, build.")
app.add_typer(annotate_app, name="annotate")


def _taxonomy(path: Path | None):
    from socialbench.moca.schema.taxonomy import load_taxonomy

    return load_taxonomy(path)


def _returned(pool_path: Path, annotations: list[Path], reviews: list[Path], arbitration: Path | None):
    from socialbench.moca.dataset.annotation import Returned, read_annotations, read_decisions, read_reviews

    pool = _read_pool([pool_path])
    ids = {r["id"] for r in pool}
    returned = Returned()
    read_annotations(annotations, ids, returned)
    read_reviews(reviews, ids, returned)
    read_decisions(arbitration, ids, returned)
    return pool, returned


@annotate_app.command("export")
def annotate_export(
    pool: Path = Opt(..., help="the filtered candidate pool (JSON lines)"),
    out_dir: Path = Opt(..., help="folder for codebook.md/.json, assignment.csv and sheets/<annotator>.csv"),
    annotator: list[str] = Opt(..., "--annotator", help="annotator name (repeatable)"),
    per_item: int = Opt(1, min=1, help="independent annotations per candidate"),
    seed: int = Opt(0, min=0, help="seed of the assignment"),
    taxonomy: Path | None = Opt(None, help="taxonomy file (default: the packaged one)"),
) -> None:
    """Export the candidate pool to annotator sheets with the 7-field codebook."""
    import json

    from socialbench.core.io import write_text_atomic
    from socialbench.core.paths import check_io, resolve_inside
    from socialbench.moca.dataset import annotation as ann

    check_io({"--pool": pool, "--taxonomy": taxonomy}, {"--out-dir": out_dir}, folders=("--out-dir",))
    sheets = {who: resolve_inside(out_dir / "sheets", f"{who}.csv", "--annotator", what="sheet") for who in annotator}
    tax = _taxonomy(taxonomy)
    records = _read_pool([pool])
    assignment = ann.assign([r["id"] for r in records], annotator, per_item, seed)
    write_text_atomic(out_dir / "codebook.md", ann.codebook_markdown(tax))
    write_text_atomic(out_dir / "codebook.json", json.dumps(ann.codebook(tax), indent=2, ensure_ascii=False) + "\n")
    assigned = [{"id": cid, "annotators": "|".join(who)} for cid, who in sorted(assignment.items())]
    write_text_atomic(out_dir / "assignment.csv", ann.to_csv(("id", "annotators"), assigned))
    for who, rows in sorted(ann.annotator_sheets(records, assignment).items()):
        write_text_atomic(sheets[who], ann.to_csv(ann.ANNOTATOR_COLUMNS, rows))
    n, who = len(records), len(annotator)
    typer.echo(f"moca annotate export: {n} candidate(s) x {per_item} to {who} annotator(s) in {out_dir}")


@annotate_app.command("review")
def annotate_review(
    pool: Path = Opt(..., help="the candidate pool the sheets came from"),
    annotations: list[Path] = Opt(..., "--annotations", help="returned annotator sheets (repeatable)"),
    reviewer: list[str] = Opt(..., "--reviewer", help="reviewer name (repeatable)"),
    out_dir: Path = Opt(..., help="folder for review sheets <reviewer>.csv"),
    seed: int = Opt(0, min=0, help="seed of the assignment"),
) -> None:
    """Export the field-level cross-check sheets (each annotation to a reviewer who did not make it)."""
    from socialbench.core.io import write_text_atomic
    from socialbench.core.paths import check_io, resolve_inside
    from socialbench.moca.dataset.annotation import REVIEW_COLUMNS, review_sheets, to_csv

    check_io({"--pool": pool, "--annotations": annotations}, {"--out-dir": out_dir}, folders=("--out-dir",))
    sheet_of = {who: resolve_inside(out_dir, f"{who}.csv", "--reviewer", what="sheet") for who in reviewer}
    records, returned = _returned(pool, annotations, [], None)
    sheets = review_sheets(records, returned, reviewer, seed)
    for who, rows in sorted(sheets.items()):
        write_text_atomic(sheet_of[who], to_csv(REVIEW_COLUMNS, rows))
    n = sum(len(r) for r in sheets.values())
    typer.echo(f"moca annotate review: {n} annotation(s) to {len(sheets)} reviewer(s) in {out_dir}")


@annotate_app.command("arbitration")
def annotate_arbitration(
    pool: Path = Opt(..., help="the candidate pool"),
    annotations: list[Path] = Opt(..., "--annotations", help="returned annotator sheets"),
    reviews: list[Path] = Opt([], "--reviews", help="returned review sheets"),
    out: Path = Opt(..., help="the arbitration sheet (disputed candidates only)"),
    taxonomy: Path | None = Opt(None, help="taxonomy file"),
) -> None:
    """Export the disputed candidates (disagreements, invalid choices, discards, unsupported evidence)."""
    from socialbench.core.io import write_text_atomic
    from socialbench.core.paths import check_io
    from socialbench.moca.dataset.annotation import ARBITRATION_COLUMNS, arbitration_rows, to_csv

    check_io(
        {"--pool": pool, "--annotations": annotations, "--reviews": reviews, "--taxonomy": taxonomy}, {"--out": out}
    )
    records, returned = _returned(pool, annotations, reviews, None)
    rows = arbitration_rows(records, returned, _taxonomy(taxonomy))
    write_text_atomic(out, to_csv(ARBITRATION_COLUMNS, rows))
    typer.echo(f"moca annotate arbitration: {len(rows)} disputed candidate(s) -> {out}")


@annotate_app.command("build")
def annotate_build(
    pool: Path = Opt(..., help="the candidate pool"),
    annotations: list[Path] = Opt(..., "--annotations", help="returned annotator sheets"),
    reviews: list[Path] = Opt([], "--reviews", help="returned review sheets"),
    arbitration: Path | None = Opt(None, help="the returned arbitration sheet"),
    out: Path = Opt(..., help="the final benchmark in the instance schema (JSON lines)"),
    report: Path = Opt(..., help="every pool candidate not in the benchmark, with its reason (JSON lines)"),
    agreement: Path | None = Opt(None, help="agreement summary (JSON)"),
    taxonomy: Path | None = Opt(None, help="taxonomy file"),
) -> None:
    """Apply the decisions, validate every tuple (B.2 step 4) and write the final instances."""
    from socialbench.core.io import write_json, write_jsonl
    from socialbench.core.paths import check_io
    from socialbench.moca.dataset.annotation import build_benchmark

    sheets = {"--pool": pool, "--annotations": annotations, "--reviews": reviews, "--arbitration": arbitration}
    check_io({**sheets, "--taxonomy": taxonomy}, {"--out": out, "--report": report, "--agreement": agreement})
    records, returned = _returned(pool, annotations, reviews, arbitration)
    result = build_benchmark(records, returned, _taxonomy(taxonomy))
    write_jsonl(out, result.instances)
    write_jsonl(report, result.report)
    if agreement is not None:
        write_json(agreement, result.agreement)
    kept, dropped, n = len(result.instances), len(result.report), len(records)
    typer.echo(f"moca annotate build: {kept} instance(s) of {n} candidate(s); {dropped} not kept (see {report})")


@app.command("stats")
def stats_cmd(
    instances: list[Path] = Opt(..., "--instances", help="benchmark instances (repeatable: the splits together)"),
    out_dir: Path = Opt(..., help="folder for table1, table11, labels (.md/.csv/.tex), figure3.png, stats.json"),
    taxonomy: Path | None = Opt(None, help="taxonomy file"),
) -> None:
    """Dataset statistics in the style of Tables 1 and 11 and Figure 3."""
    from socialbench.core.io import write_bytes_atomic, write_json, write_text_atomic
    from socialbench.core.paths import check_io
    from socialbench.moca.dataset.dataset_stats import compute, figure_png, labels_table, table1, table11
    from socialbench.moca.schema.instances import load_instances

    check_io({"--instances": instances, "--taxonomy": taxonomy}, {"--out-dir": out_dir}, folders=("--out-dir",))
    tax = _taxonomy(taxonomy)
    records = [r for p in instances for r in load_instances(p, tax)]
    stats = compute(records, tax)
    for name, tables in (("table1", table1(stats)), ("table11", table11(stats)), ("labels", labels_table(stats))):
        for ext, text in tables.items():
            write_text_atomic(out_dir / f"{name}.{ext}", text)
    write_bytes_atomic(out_dir / "figure3.png", figure_png(stats))
    write_json(out_dir / "stats.json", stats)
    typer.echo(f"moca stats: {stats['instances']} instance(s) -> {out_dir}")
