"""``socialbench meetingtom ...``: MeetingToM data commands with explicit paths (the pipeline's stages are in
rules/meetingtom.smk; ``you-events`` and ``mine`` run on any annotations folder)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer

from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.core.io import (
    decode_utf8,
    parse_json,
    parse_json_object,
    read_file_bytes,
    read_jsonl,
    write_json,
    write_jsonl,
)
from socialbench.core.io import write_text_atomic as write_text
from socialbench.core.paths import check_io, resolve_inside

TYPER = dict(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
meetingtom_app = typer.Typer(
    **TYPER, help="MeetingToM data: the demo release, AMI sources, you events, mining, clips, Task 2.1 instances."
)
app = meetingtom_app  # the name socialbench.cli mounts every benchmark's commands by
Opt = typer.Option


def _corpus(ami: Path, meetings: list[str] | None, strict: bool, problems: Path | None):
    """The parsed corpus, its problems written to ``problems`` when given."""
    from socialbench.meetingtom.dataset.ami.nxt import parse_corpus

    corpus = parse_corpus(ami, meetings or None, strict=strict)
    if problems is not None:
        write_jsonl(problems, [p.as_dict() for p in corpus.problems])
    return corpus


@meetingtom_app.command("you-events")
def you_events_cmd(
    ami: Path = Opt(..., help="AMI manual annotations folder (words/, dialogueActs/, youUsages/, ...)"),
    out: Path = Opt(..., help="you events, JSON lines (meeting, speaker, word_id, start, end, addressee)"),
    problems: Path | None = Opt(None, help="annotation problems found while parsing, JSON lines"),
    meeting: list[str] | None = Opt(None, help="only this meeting (repeatable; default: every meeting)"),
    strict: bool = Opt(False, help="stop at the first annotation error instead of reporting it"),
) -> None:
    """Singular deictic "you" in a dialogue act naming exactly one addressee, by meeting and start time."""
    check_io({"--ami": ami}, {"--out": out, "--problems": problems}, folders=("--ami",))
    from socialbench.meetingtom.dataset.ami.you_events import you_events

    corpus = _corpus(ami, meeting, strict, problems)
    events = you_events(corpus.meetings)
    write_jsonl(out, [e.as_dict() for e in events])
    kinds = ", ".join(f"{k}={v}" for k, v in sorted(Counter(p.kind for p in corpus.problems).items())) or "none"
    typer.echo(f"you-events: {len(events)} events from {len(corpus.meetings)} meetings -> {out}; problems: {kinds}")


@meetingtom_app.command("mine")
def mine_cmd(
    ami: Path = Opt(..., help="AMI manual annotations folder"),
    out: Path = Opt(..., help="kept candidates, JSON lines"),
    report: Path = Opt(..., help="rejected candidates with their reason, JSON lines"),
    problems: Path | None = Opt(None, help="annotation problems found while parsing, JSON lines"),
    task: list[str] | None = Opt(None, help="state | you | consensus (repeatable; default: all three)"),
    meeting: list[str] | None = Opt(None, help="only this meeting (repeatable; default: every meeting)"),
    strict: bool = Opt(False, help="stop at the first annotation error instead of reporting it"),
) -> None:
    """Mine non-overlapping candidate windows for the three MeetingToM tasks (default thresholds)."""
    check_io({"--ami": ami}, {"--out": out, "--report": report, "--problems": problems}, folders=("--ami",))
    from socialbench.meetingtom.dataset.ami.mining import TASKS, mine_corpus

    tasks = tuple(task) if task else TASKS
    unknown = sorted(set(tasks) - set(TASKS))
    if unknown:
        raise ConfigError(f"--task {', '.join(unknown)}: unknown (known: {', '.join(TASKS)})")
    corpus = _corpus(ami, meeting, strict, problems)
    result = mine_corpus(corpus.meetings, tasks=tasks)
    write_jsonl(out, [c.as_dict() for c in result.accepted])
    write_jsonl(report, [c.as_dict() for c in result.rejected])
    kept = Counter(c.task for c in result.accepted)
    dropped = Counter(c.task for c in result.rejected)
    summary = ", ".join(f"{t}: {kept[t]} kept, {dropped[t]} rejected" for t in tasks)
    typer.echo(f"mine: {len(corpus.meetings)} meetings; {summary} -> {out}, {report}")


# ---- pipeline stages ------------------------------------------------------------------------------
def _logging() -> None:
    import logging
    import sys

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def _params(path: Path) -> dict:
    from socialbench.core.config import load_params
    from socialbench.meetingtom.schema.settings import section

    p = load_params(path)
    section(p)
    return p


def _source(p: dict, name: str, meeting: str | None = None):
    """Source ``name``'s settings; ``meeting`` must be one of its meetings."""
    from socialbench.meetingtom.schema.settings import source_settings

    src = source_settings(p, name)
    if meeting is not None and meeting not in src.meetings:
        listed = ", ".join(src.meetings) or "none"
        raise ConfigError(f"meetingtom.{name}.meetings: {meeting} is not listed (listed: {listed})")
    return src


@meetingtom_app.command("release")
def release_cmd(
    source: str = Opt(..., help="demo | ami"),
    out: Path = Opt(..., help="release folder (source.json; annotations/ or manifest.json)"),
    downloads: Path = Opt(..., help="where the archive is downloaded or copied to (kept between runs, not versioned)"),
    params: Path = Opt(Path("params.yaml"), help="the params file (its meetingtom and media sections)"),
) -> None:
    """Acquire a source's manual-annotations release (dataset/release.py)."""
    check_io({"--params": params}, {"--out": out, "--downloads": downloads}, folders=("--out", "--downloads"))
    from socialbench.meetingtom.dataset.release import acquire_release

    _logging()
    from socialbench.acquire.archive import ArchiveLimits
    from socialbench.acquire.download import TrustStore

    p = _params(params)
    info = acquire_release(
        _source(p, source), out, downloads, trust=TrustStore(), limits=ArchiveLimits.from_params(p)
    )  # sources.lock at the repository root, where the pipeline runs
    typer.echo(
        f"release {source}: {info['mode']}, {info['files'] or 0} annotation files"
        + (f"; note: {info['note']}" if info["note"] else "")
        + f" -> {out}"
    )


@meetingtom_app.command("media")
def media_cmd(
    source: str = Opt(..., help="demo | ami"),
    meeting: str = Opt(..., help="a meeting of meetingtom.<source>.meetings"),
    dest_root: Path = Opt(..., help="local root in the official layout (files go to <root>/amicorpus/<meeting>/...)"),
    params: Path = Opt(Path("params.yaml"), help="the params file (its meetingtom and media sections)"),
) -> None:
    """Fetch one meeting's views (meetingtom.<source>.views) and write amicorpus/<meeting>/fetched.json."""
    check_io({"--params": params}, {"--dest-root": dest_root}, folders=("--dest-root",))
    from socialbench.meetingtom.dataset.release import fetch_meeting_media

    _logging()
    src = _source(_params(params), source, meeting)
    rec = fetch_meeting_media(src, meeting, dest_root)
    typer.echo(
        f"media {source}/{meeting}: {len(rec['views'])} file(s)" + (f"; note: {rec['note']}" if rec["note"] else "")
    )


@meetingtom_app.command("extract")
def extract_cmd(
    source: str = Opt(..., help="demo | ami"),
    meeting: str = Opt(..., help="a meeting of meetingtom.<source>.meetings"),
    release: Path = Opt(..., help="the source's release folder (written by `release`)"),
    out_dir: Path = Opt(..., help="the meeting's folder (JSON lines of its you events, candidates...; meeting.json)"),
    params: Path = Opt(Path("params.yaml"), help="the params file (its meetingtom and media sections)"),
) -> None:
    """One meeting's you events, mined and rejected candidates, parse problems and words (dataset/extract.py)."""
    check_io({"--release": release, "--params": params}, {"--out-dir": out_dir}, folders=("--release", "--out-dir"))
    from socialbench.meetingtom.dataset.extract import absent_meeting, extract_meeting, write_meeting
    from socialbench.meetingtom.dataset.release import read_source

    _logging()
    p = _params(params)
    _source(p, source, meeting)  # a meeting of the source
    info = read_source(release)
    if not info["present"]:
        files = absent_meeting(meeting, source, info["note"])
    else:
        files = extract_meeting(info["annotations"], meeting, source, p["meetingtom"]["mining"])
    write_meeting(out_dir, files)
    c = files["meeting.json"]["counts"]
    typer.echo(
        f"extract {source}/{meeting}: {c['you_events']} you events,"
        f" {c['candidates']} candidates, {c['rejected']} rejected,"
        f" {c['problems']} problems -> {out_dir}"
    )


@meetingtom_app.command("clips")
def clips_cmd(
    meeting_dir: Path = Opt(..., help="the meeting's folder written by `extract`"),
    fetched: Path = Opt(..., help="the meeting's amicorpus/<meeting>/fetched.json written by `media`"),
    out_dir: Path = Opt(..., help="the meeting's clips folder"),
    params: Path = Opt(Path("params.yaml"), help="params (media section; meetingtom.clips)"),
) -> None:
    """Clips of the meeting's kept candidates (dataset/clips.py); those not made go to report.jsonl."""
    check_io(
        {"--meeting-dir": meeting_dir, "--fetched": fetched, "--params": params},
        {"--out-dir": out_dir},
        folders=("--meeting-dir", "--out-dir"),
    )

    from socialbench.media.settings import MediaSettings
    from socialbench.meetingtom.dataset.clips import make_clips
    from socialbench.meetingtom.dataset.extract import read_meeting

    _logging()
    p = _params(params)
    m = read_meeting(meeting_dir)
    if not fetched.exists():
        raise SocialbenchError(f"{fetched}: not found (socialbench meetingtom media writes it)")
    rec = parse_json_object(read_file_bytes(fetched), str(fetched), "(the fetched media)")
    summary = make_clips(
        m["meeting.json"],
        m["candidates.jsonl"],
        m["words.jsonl"],
        rec,
        out_dir,
        tasks=p["meetingtom"]["clips"]["tasks"],
        settings=MediaSettings.from_params(p),
        utterance_gap=p["meetingtom"]["clips"]["utterance_gap_s"],
        source=str(fetched),
    )
    typer.echo(
        f"clips {m['meeting.json']['meeting']}: {summary['clips']} clip(s), {summary['failed']} failed"
        + (f"; note: {summary['note']}" if summary["note"] else "")
        + f" -> {out_dir}"
    )


@meetingtom_app.command("instances")
def instances_cmd(
    source: str = Opt(..., help="demo | ami"),
    release: Path = Opt(..., help="the source's release folder"),
    meetings_dir: Path = Opt(..., help="folder of the per-meeting folders written by `extract` (<dir>/<meeting>/)"),
    clips_dir: Path | None = Opt(None, help="folder of the per-meeting clips folders (none: a source without views)"),
    out_dir: Path = Opt(
        ...,
        help="the source's instance folder: task2_1.jsonl, items.jsonl, sheet.csv, you_events.jsonl,"
        " candidates.jsonl, report.jsonl, source.json",
    ),
    params: Path = Opt(Path("params.yaml"), help="the params file (its meetingtom and media sections)"),
) -> None:
    """Task 2.1 instances of one source, the annotated tasks' items and sheet, and the report (dataset/instances.py)."""
    check_io(
        {"--release": release, "--meetings-dir": meetings_dir, "--clips-dir": clips_dir, "--params": params},
        {"--out-dir": out_dir},
        folders=("--release", "--meetings-dir", "--clips-dir", "--out-dir"),
    )
    from socialbench.meetingtom.dataset.ami.you_events import layer_agreement_records
    from socialbench.meetingtom.dataset.annotation import agreement_subset, export_sheet
    from socialbench.meetingtom.dataset.extract import read_meeting
    from socialbench.meetingtom.dataset.instances import build_source
    from socialbench.meetingtom.dataset.release import read_source

    p = _params(params)
    src = _source(p, source)
    info = read_source(release)
    meetings = [read_meeting(meetings_dir / m) for m in src.meetings]
    # a source without views has no clips: its instances are kept without media (the report says so)
    clip_dirs = {m: clips_dir / m for m in src.meetings} if clips_dir is not None else {}
    clips = {m: read_jsonl(d / "clips.jsonl") for m, d in clip_dirs.items() if (d / "clips.jsonl").is_file()}
    reports = {m: read_jsonl(d / "report.jsonl") for m, d in clip_dirs.items() if (d / "report.jsonl").is_file()}
    mt = p["meetingtom"]
    insts, items, report = build_source(
        meetings,
        clips,
        reports,
        source=source,
        modality=src.modality,
        seed=p["seed"],
        dev_meetings=mt["dev_meetings"],
        include_speaker=mt["task2_1"]["include_speaker"],
        utterance_gap=mt["clips"]["utterance_gap_s"],
    )
    write_jsonl(out_dir / "task2_1.jsonl", insts)
    write_jsonl(out_dir / "items.jsonl", items)
    write_text(out_dir / "sheet.csv", export_sheet(items))
    # the agreement subset (paper 3.3), drawn before annotation: all three label it, kappa is computed on it
    write_json(
        out_dir / "agreement_subset.json", agreement_subset(items, p["seed"], mt["annotation"]["agreement_items"])
    )
    write_jsonl(out_dir / "you_events.jsonl", [e for m in meetings for e in m["you_events.jsonl"]])
    write_jsonl(out_dir / "candidates.jsonl", [c for m in meetings for c in m["candidates.jsonl"]])
    write_jsonl(out_dir / "report.jsonl", report)
    note = info["note"] if not info["present"] else None
    counts = Counter(i["task"] for i in items)
    write_json(
        out_dir / "source.json",
        {
            "source": source,
            "present": info["present"],
            "mode": info["mode"],
            "note": note,
            "meetings": list(src.meetings),
            "modality": src.modality,
            "instances": {"task2_1": {s: sum(i["split"] == s for i in insts) for s in ("test", "dev")}},
            "items": dict(sorted(counts.items())),
            "not_instances": len(report),
            # how the two AMI layers Task 2.1's gold joins agree, where the paper reports its human kappa
            "task2_1_gold": {
                "from": "AMI you-usages (singular you) x dialogue-act addressee layer",
                "layer_agreement": layer_agreement_records(
                    c for m in meetings for c in (*m["candidates.jsonl"], *m["rejected.jsonl"])
                ),
            },
        },
    )
    if note:
        typer.echo(f"instances {source}: none; note: {note}")
    else:
        typer.echo(
            f"instances {source}: {len(insts)} Task 2.1 instance(s), {len(items)} item(s) to annotate"
            f" ({', '.join(f'{k} {v}' for k, v in sorted(counts.items())) or 'none'}),"
            f" {len(report)} report entr(ies) -> {out_dir}"
        )


annotate_app = typer.Typer(
    **TYPER,
    help="The annotation round-trip (B.3): sheets out, two annotators and an adjudicator in, gold and agreement.",
)
meetingtom_app.add_typer(annotate_app, name="annotate")


def _sheet_text(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


@annotate_app.command("export")
def annotate_export_cmd(
    items: Path = Opt(..., help="items to annotate (JSON lines, written by `meetingtom instances`)"),
    out: Path = Opt(..., help="the annotation sheet (CSV: one row per item with its clip paths, question and options)"),
) -> None:
    """The annotation sheet of a source's items (the instances stage also writes it as sheet.csv)."""
    check_io({"--items": items}, {"--out": out})
    from socialbench.meetingtom.dataset.annotation import export_sheet
    from socialbench.meetingtom.schema.instances import load_instances

    recs = load_instances(items, items=True)
    write_text(out, export_sheet(recs))
    typer.echo(f"annotate export: {len(recs)} row(s) -> {out}")


@annotate_app.command("simulate")
def annotate_simulate_cmd(
    items: Path = Opt(..., help="the items the sheet was exported from (JSON lines; their metadata drive it)"),
    sheet: Path = Opt(..., help="the exported annotation sheet (CSV) the simulated annotators fill in"),
    out_dir: Path = Opt(..., help="folder for annotator_1.csv, annotator_2.csv and adjudicator.csv"),
    params: Path = Opt(Path("params.yaml"), help="the params file (seed; meetingtom.annotation.simulated)"),
) -> None:
    """Simulated annotators for the demo: a TEST DOUBLE for B.3's people (each sheet says so in its notes)."""
    check_io({"--items": items, "--sheet": sheet, "--params": params}, {"--out-dir": out_dir}, folders=("--out-dir",))
    # each sheet inside --out-dir (a link named like a sheet that leads elsewhere is refused), before any work
    targets = [resolve_inside(out_dir, name, "--out-dir", what="sheet") for name in SIMULATED_FILES]
    from socialbench.meetingtom.dataset.annotation import read_sheet, simulate_sheets
    from socialbench.meetingtom.schema.instances import load_instances

    p = _params(params)
    recs = load_instances(items, items=True)
    by_id = {r["id"]: r for r in recs}
    read_sheet(_sheet_text(sheet), str(sheet), by_id, complete=True)  # its rows are the items, each once
    ann = p["meetingtom"]["annotation"]
    sim = dict(accuracy=ann["simulated"]["accuracy"], agreement_items=ann["agreement_items"], source=str(items))
    for target, text in zip(targets, simulate_sheets(recs, p["seed"], **sim)):
        write_text(target, text)
    typer.echo(
        f"annotate simulate: {len(recs)} item(s), {', '.join(SIMULATED_FILES)}"
        f" -> {out_dir} (simulated annotators, a test double)"
    )


@annotate_app.command("human")
def annotate_human_cmd(
    instances: Path = Opt(..., help="the test instances (data/processed/meetingtom/test.jsonl)"),
    source: str = Opt("demo", help="demo | ami: answer this source's instances only"),
    out: Path = Opt(..., help="the recorded answers (JSON lines) the file backend replays as the human row"),
    params: Path = Opt(Path("params.yaml"), help="the params file (seed; meetingtom.annotation.simulated)"),
) -> None:
    """A simulated human evaluation for the demo's human row: a TEST DOUBLE (the records say so)."""
    from socialbench.meetingtom.schema.settings import SOURCES

    if source not in SOURCES:
        raise ConfigError(f"meetingtom annotate human --source: must be one of {', '.join(SOURCES)}, got {source!r}")
    check_io({"--instances": instances, "--params": params}, {"--out": out})
    from socialbench.meetingtom.dataset.annotation import simulate_human
    from socialbench.meetingtom.schema.instances import load_instances

    p = _params(params)
    recs = [i for i in load_instances(instances) if i["source"] == source]
    answers = simulate_human(recs, p["seed"], p["meetingtom"]["annotation"]["simulated"]["human_accuracy"])
    write_jsonl(out, answers)
    typer.echo(
        f"annotate human: {len(answers)} simulated answer(s) for the {source} instances -> {out} (a test double)"
    )


#: The simulated annotators' sheets (rules/meetingtom.smk names the same files).
SIMULATED_FILES = ("annotator_1.csv", "annotator_2.csv", "adjudicator.csv")


@annotate_app.command("import")
def annotate_import_cmd(
    items: Path = Opt(..., help="the items the sheets were exported from (JSON lines)"),
    subset: Path = Opt(..., help="the agreement subset drawn at export (JSON list of item ids: agreement_subset.json)"),
    out_dir: Path = Opt(..., help="folder for gold.jsonl, instances.jsonl, discarded.jsonl and agreement.json"),
    annotator: list[Path] | None = Opt(None, help="a primary annotator's filled sheet (CSV); twice or not at all"),
    adjudicator: Path | None = Opt(None, help="the adjudicator's sheet (CSV): the agreement subset, disagreements"),
    note: str | None = Opt(None, help="without sheets: why this source has no annotations (written to agreement.json)"),
) -> None:
    """Majority vote of two annotators and an adjudicator (B.3); without sheets, empty outputs that say why."""
    sheets = list(annotator or [])
    if len(sheets) not in (0, 2) or (adjudicator is None) != (not sheets):
        raise ConfigError(
            "meetingtom annotate import: give two --annotator sheets and one --adjudicator sheet, or none of them"
        )
    check_io(
        {
            "--items": items,
            "--subset": subset,
            "--annotator": sheets,
            **({"--adjudicator": adjudicator} if adjudicator else {}),
        },
        {"--out-dir": out_dir},
        folders=("--out-dir",),
    )
    if sheets:  # one sheet in two roles would make a perfect, meaningless agreement
        from socialbench.core.sheets import distinct_sheets

        distinct_sheets([("--annotator", sheets[0]), ("--annotator", sheets[1]), ("--adjudicator", adjudicator)])

    from socialbench.meetingtom.dataset.annotation import adjudicate, agreement, apply_gold, read_sheet, validate_gold
    from socialbench.meetingtom.schema.instances import load_instances

    parsed = parse_json(decode_utf8(read_file_bytes(subset), str(subset)))
    if parsed.problem is not None:
        raise DataError(str(subset), f"{parsed.problem}; expected a JSON list of item ids")
    drawn = parsed.value
    if not isinstance(drawn, list) or not all(isinstance(x, str) for x in drawn):
        raise DataError(str(subset), f"must be a JSON list of item ids, got {type(drawn).__name__}")
    recs = load_instances(items, items=True)
    by_id = {r["id"]: r for r in recs}
    for k, iid in enumerate(drawn):  # an id that is no item leaves the kappa computed on nothing
        if iid not in by_id:
            raise DataError(str(subset), f"{iid!r} is not an item of {items}", record=f"entry {k}")
        if iid in drawn[:k]:
            raise DataError(str(subset), f"{iid!r} is listed twice", record=f"entry {k}")
    if sheets:
        a1, a2, adj = (read_sheet(_sheet_text(s), str(s), by_id, complete=True) for s in (*sheets, adjudicator))
        gold, discarded = adjudicate(recs, a1, a2, adj)
        validate_gold(gold, str(out_dir / "gold.jsonl"))
        labelled = apply_gold(recs, gold)
        sheet_names = [str(s) for s in (*sheets, adjudicator)]
        report = {"note": None, "sheets": sheet_names, "tasks": agreement(recs, a1, a2, adj, subset=drawn)}
        done = f"{len(gold)} gold label(s), {len(discarded)} discarded (see discarded.jsonl)"
    else:
        reason = note or "no annotation sheets configured for this source"
        gold, labelled, report = [], [], {"note": reason, "tasks": {}}
        discarded = [
            {"item_id": r["id"], "task": r["task"], "reason": "not_annotated", "detail": reason, "labels": {}}
            for r in recs
        ]
        done = f"no sheets ({reason}); {len(recs)} item(s) not annotated"
    write_jsonl(out_dir / "gold.jsonl", gold)
    write_jsonl(out_dir / "instances.jsonl", labelled)
    write_jsonl(out_dir / "discarded.jsonl", discarded)
    write_json(out_dir / "agreement.json", report)
    typer.echo(f"annotate import: {done} -> {out_dir}")


@meetingtom_app.command("consolidate")
def consolidate_cmd(
    source_dir: list[Path] = Opt(..., "--source-dir", help="a source's instance folder (repeatable)"),
    gold_dir: list[Path] = Opt(..., "--gold-dir", help="that source's gold folder (one per --source-dir, in order)"),
    out_dir: Path = Opt(..., help="data/processed/meetingtom: test.jsonl, dev.jsonl, tasks/<task>.jsonl"),
) -> None:
    """One JSON-lines file per task (B.5; test split) and the test and dev splits the shared stages read."""
    if len(gold_dir) != len(source_dir):
        raise ConfigError(
            "meetingtom consolidate: give one --gold-dir per --source-dir"
            f" ({len(source_dir)} source(s), {len(gold_dir)} gold folder(s))"
        )
    from socialbench.meetingtom.schema.instances import TASK, load_instances
    from socialbench.meetingtom.schema.questions import TASKS

    for option, folders in (("--source-dir", source_dir), ("--gold-dir", gold_dir)):
        seen: dict[Path, int] = {}
        for n, folder in enumerate(folders, start=1):
            first = seen.setdefault(folder.resolve(), n)
            if first != n:
                raise ConfigError(
                    f"{folder}: given as {option} twice (number {first} and {n}); each source's folder once"
                )
    # the out-dir holds the sources' folders (data/processed/meetingtom/<source>): what it receives is checked
    check_io(
        {"--source-dir": source_dir, "--gold-dir": gold_dir},
        {"--out-dir": out_dir},
        folders=("--source-dir", "--gold-dir", "--out-dir"),
        receives={"--out-dir": [out_dir / "test.jsonl", out_dir / "dev.jsonl", out_dir / "tasks"]},
    )
    insts, origin = [], {}
    for d, g in zip(source_dir, gold_dir):
        for path in (d / f"{TASK}.jsonl", g / "instances.jsonl"):
            for inst in load_instances(path):
                if inst["id"] in origin:
                    why = f"instance id {inst['id']} is also in {origin[inst['id']]}; each source's ids must differ"
                    raise DataError(str(path), why, record=inst["id"], field="id")
                origin[inst["id"]] = path
                insts.append(inst)
    insts.sort(key=lambda i: i["id"])
    for split in ("test", "dev"):
        write_jsonl(out_dir / f"{split}.jsonl", [i for i in insts if i["split"] == split])
    test = [i for i in insts if i["split"] == "test"]
    for task in TASKS:
        write_jsonl(out_dir / "tasks" / f"{task}.jsonl", [i for i in test if i["task"] == task])
    counts = Counter(i["task"] for i in test)
    typer.echo(
        f"consolidate: {sum(counts.values())} test ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}),"
        f" {sum(i['split'] == 'dev' for i in insts)} dev -> {out_dir}"
    )
