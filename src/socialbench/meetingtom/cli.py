"""``socialbench meetingtom ...``: MeetingToM data commands, each with explicit paths.

Mounted on the main app as ``socialbench meetingtom`` (socialbench.cli mounts ``meetingtom_app``).
The pipeline's stages, in order (rules/meetingtom.smk; docs/meetingtom.md):

* ``socialbench demo --benchmark meetingtom``: the demo release as a local mirror (official layout);
* ``release``: a source's annotations release (archive fetched, checked and extracted, or an unpacked
  mirror read in place, or a note that the mirror is absent);
* ``media``: one meeting's videos and audio; ``extract``: one meeting's you events, candidates,
  rejected candidates, parse problems and transcript words; ``clips``: one meeting's clips;
* ``instances``: a source's Task 2.1 instances; ``consolidate``: the task files and the splits.

``you-events`` and ``mine`` run on any annotations folder with the default thresholds.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Optional

import typer

from socialbench.errors import ConfigError, SocialbenchError

meetingtom_app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                             help="MeetingToM data: the demo release, AMI sources, you events, mining, clips, Task 2.1 instances.")  # fmt: skip
Opt = typer.Option


def _corpus(ami: Path, meetings: Optional[list[str]], strict: bool):
    from socialbench.meetingtom.ami.nxt import parse_corpus

    return parse_corpus(ami, meetings or None, strict=strict)


def _write_problems(path: Optional[Path], corpus) -> None:
    from socialbench.io import write_jsonl

    if path is not None:
        write_jsonl(path, [p.as_dict() for p in corpus.problems])


def _problem_summary(corpus) -> str:
    counts = Counter(p.kind for p in corpus.problems)
    return ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "none"


@meetingtom_app.command("you-events")
def you_events_cmd(
    ami: Path = Opt(..., help="AMI manual annotations folder (words/, dialogueActs/, youUsages/, ...)"),
    out: Path = Opt(..., help="you events, JSON lines (meeting, speaker, word_id, start, end, addressee)"),
    problems: Optional[Path] = Opt(None, help="annotation problems found while parsing, JSON lines"),
    meeting: Optional[list[str]] = Opt(None, help="only this meeting (repeatable; default: every meeting)"),
    strict: bool = Opt(False, help="stop at the first annotation error instead of reporting it"),
) -> None:
    """Singular deictic "you" (you_11) inside a dialogue act of the same speaker that names exactly
    one addressee, sorted by meeting and start time."""
    from socialbench.paths import check_io

    check_io({"--ami": ami}, {"--out": out, "--problems": problems}, folders=("--ami",))
    from socialbench.io import write_jsonl
    from socialbench.meetingtom.ami.you_events import you_events

    corpus = _corpus(ami, meeting, strict)
    events = you_events(corpus.meetings)
    write_jsonl(out, [e.as_dict() for e in events])
    _write_problems(problems, corpus)
    typer.echo(f"you-events: {len(events)} events from {len(corpus.meetings)} meetings -> {out}; problems: {_problem_summary(corpus)}")


@meetingtom_app.command("mine")
def mine_cmd(
    ami: Path = Opt(..., help="AMI manual annotations folder"),
    out: Path = Opt(..., help="kept candidates, JSON lines"),
    report: Path = Opt(..., help="rejected candidates with their reason, JSON lines"),
    problems: Optional[Path] = Opt(None, help="annotation problems found while parsing, JSON lines"),
    task: Optional[list[str]] = Opt(None, help="state | you | consensus (repeatable; default: all three)"),
    meeting: Optional[list[str]] = Opt(None, help="only this meeting (repeatable; default: every meeting)"),
    strict: bool = Opt(False, help="stop at the first annotation error instead of reporting it"),
) -> None:
    """Mine non-overlapping candidate windows for the three MeetingToM tasks (default thresholds)."""
    from socialbench.paths import check_io

    check_io({"--ami": ami}, {"--out": out, "--report": report, "--problems": problems}, folders=("--ami",))
    from socialbench.io import write_jsonl
    from socialbench.meetingtom.ami.mining import TASKS, mine_corpus

    tasks = tuple(task) if task else TASKS
    unknown = sorted(set(tasks) - set(TASKS))
    if unknown:
        raise ConfigError(f"--task {', '.join(unknown)}: unknown (known: {', '.join(TASKS)})")
    corpus = _corpus(ami, meeting, strict)
    result = mine_corpus(corpus.meetings, tasks=tasks)
    write_jsonl(out, [c.as_dict() for c in result.accepted])
    write_jsonl(report, [c.as_dict() for c in result.rejected])
    _write_problems(problems, corpus)
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
    from socialbench.config import load_params
    from socialbench.meetingtom.settings import section

    p = load_params(path)
    section(p)
    return p


def _source(p: dict, name: str):
    from socialbench.meetingtom.settings import source_settings

    return source_settings(p, name)


def _meeting_of(source, meeting: str) -> None:
    if meeting not in source.meetings:
        raise ConfigError(f"meetingtom.{source.name}.meetings: {meeting} is not listed (listed: {', '.join(source.meetings) or 'none'})")


@meetingtom_app.command("release")
def release_cmd(
    source: str = Opt(..., help="demo | ami"),
    out: Path = Opt(..., help="release folder (source.json; annotations/ or manifest.json)"),
    downloads: Path = Opt(..., help="where the archive is downloaded or copied to (kept between runs, not versioned)"),
    params: Path = Opt(Path("params.yaml"), help="the params file (its meetingtom and media sections)"),
) -> None:
    """Acquire a source's manual-annotations release (fetch, checksum, safe extraction; or read an
    unpacked mirror in place; or note that the mirror is absent)."""
    from socialbench.paths import check_io

    check_io({"--params": params}, {"--out": out, "--downloads": downloads}, folders=("--out", "--downloads"))
    from socialbench.meetingtom.release import acquire_release

    _logging()
    info = acquire_release(_source(_params(params), source), out, downloads)
    typer.echo(f"release {source}: {info['mode']}, {info['files'] or 0} annotation files"
               + (f"; note: {info['note']}" if info["note"] else "") + f" -> {out}")


@meetingtom_app.command("media")
def media_cmd(
    source: str = Opt(..., help="demo | ami"),
    meeting: str = Opt(..., help="a meeting of meetingtom.<source>.meetings"),
    dest_root: Path = Opt(..., help="local root in the official layout (files go to <root>/amicorpus/<meeting>/...)"),
    params: Path = Opt(Path("params.yaml"), help="the params file (its meetingtom and media sections)"),
) -> None:
    """Fetch one meeting's views (meetingtom.<source>.views) and write amicorpus/<meeting>/fetched.json."""
    from socialbench.paths import check_io

    check_io({"--params": params}, {"--dest-root": dest_root}, folders=("--dest-root",))
    from socialbench.meetingtom.release import fetch_meeting_media

    _logging()
    src = _source(_params(params), source)
    _meeting_of(src, meeting)
    rec = fetch_meeting_media(src, meeting, dest_root)
    typer.echo(f"media {source}/{meeting}: {len(rec['views'])} file(s)" + (f"; note: {rec['note']}" if rec["note"] else ""))


@meetingtom_app.command("extract")
def extract_cmd(
    source: str = Opt(..., help="demo | ami"),
    meeting: str = Opt(..., help="a meeting of meetingtom.<source>.meetings"),
    release: Path = Opt(..., help="the source's release folder (written by `release`)"),
    out_dir: Path = Opt(..., help="the meeting's folder: you_events, candidates, rejected, problems, words (JSON lines), meeting.json"),
    params: Path = Opt(Path("params.yaml"), help="the params file (its meetingtom and media sections)"),
) -> None:
    """One meeting's you events, mined candidates (thresholds: meetingtom.mining), rejected
    candidates with reasons, parse problems and transcript words."""
    from socialbench.paths import check_io

    check_io({"--release": release, "--params": params}, {"--out-dir": out_dir}, folders=("--release", "--out-dir"))
    from socialbench.meetingtom.extract import absent_meeting, extract_meeting, write_meeting
    from socialbench.meetingtom.release import read_source

    _logging()
    p = _params(params)
    src = _source(p, source)
    _meeting_of(src, meeting)
    info = read_source(release)
    if not info["present"]:
        files = absent_meeting(meeting, source, info["note"])
    else:
        files = extract_meeting(info["annotations"], meeting, source, p["meetingtom"]["mining"])
    write_meeting(out_dir, files)
    c = files["meeting.json"]["counts"]
    typer.echo(f"extract {source}/{meeting}: {c['you_events']} you events, {c['candidates']} candidates, {c['rejected']} rejected,"
               f" {c['problems']} problems -> {out_dir}")


@meetingtom_app.command("clips")
def clips_cmd(
    meeting_dir: Path = Opt(..., help="the meeting's folder written by `extract`"),
    fetched: Path = Opt(..., help="the meeting's amicorpus/<meeting>/fetched.json written by `media`"),
    out_dir: Path = Opt(..., help="the meeting's clips folder"),
    params: Path = Opt(Path("params.yaml"), help="params (media section; meetingtom.clips)"),
) -> None:
    """Clips of the meeting's kept candidates (meetingtom.clips.tasks): Corner, close-ups by
    participant letter, the 2x2 mosaic, audio and transcript with the same timestamps, and frames
    at media.meeting_fps. Clips that cannot be made go to report.jsonl (media.on_error)."""
    from socialbench.paths import check_io

    check_io({"--meeting-dir": meeting_dir, "--fetched": fetched, "--params": params}, {"--out-dir": out_dir}, folders=("--meeting-dir", "--out-dir"))
    import json

    from socialbench.media.settings import MediaSettings
    from socialbench.meetingtom.clips import make_clips
    from socialbench.meetingtom.extract import read_meeting

    _logging()
    p = _params(params)
    m = read_meeting(meeting_dir)
    try:
        rec = json.loads(fetched.read_text("utf-8"))
    except FileNotFoundError:
        raise SocialbenchError(f"{fetched}: not found (socialbench meetingtom media writes it)") from None
    summary = make_clips(m["meeting.json"], m["candidates.jsonl"], m["words.jsonl"], rec, out_dir,
                         tasks=p["meetingtom"]["clips"]["tasks"], settings=MediaSettings.from_params(p),
                         utterance_gap=p["meetingtom"]["clips"]["utterance_gap_s"])  # fmt: skip
    typer.echo(f"clips {m['meeting.json']['meeting']}: {summary['clips']} clip(s), {summary['failed']} failed"
               + (f"; note: {summary['note']}" if summary["note"] else "") + f" -> {out_dir}")


@meetingtom_app.command("instances")
def instances_cmd(
    source: str = Opt(..., help="demo | ami"),
    release: Path = Opt(..., help="the source's release folder"),
    meetings_dir: Path = Opt(..., help="folder of the per-meeting folders written by `extract` (<dir>/<meeting>/)"),
    clips_dir: Path = Opt(..., help="folder of the per-meeting clips folders (<dir>/<meeting>/)"),
    out_dir: Path = Opt(..., help="the source's instance folder: task2_1.jsonl, you_events.jsonl, candidates.jsonl, report.jsonl, source.json"),
    params: Path = Opt(Path("params.yaml"), help="the params file (its meetingtom and media sections)"),
) -> None:
    """Task 2.1 instances of one source's meetings (meetingtom.<source>.meetings), gold from their
    you events; candidates that make no instance go to report.jsonl with the reason."""
    from socialbench.paths import check_io

    check_io({"--release": release, "--meetings-dir": meetings_dir, "--clips-dir": clips_dir, "--params": params}, {"--out-dir": out_dir}, folders=("--release", "--meetings-dir", "--clips-dir", "--out-dir"))
    from socialbench.io import read_jsonl, write_json, write_jsonl
    from socialbench.meetingtom.extract import read_meeting
    from socialbench.meetingtom.instances import build_source
    from socialbench.meetingtom.release import read_source

    p = _params(params)
    src = _source(p, source)
    info = read_source(release)
    meetings = [read_meeting(meetings_dir / m) for m in src.meetings]
    clips = {m: read_jsonl(clips_dir / m / "clips.jsonl") for m in src.meetings if (clips_dir / m / "clips.jsonl").is_file()}
    reports = {m: read_jsonl(clips_dir / m / "report.jsonl") for m in src.meetings if (clips_dir / m / "report.jsonl").is_file()}
    mt = p["meetingtom"]
    insts, report = build_source(meetings, clips, reports, source=source, modality=src.modality, seed=p["seed"],
                                 dev_meetings=mt["dev_meetings"], include_speaker=mt["task2_1"]["include_speaker"],
                                 utterance_gap=mt["clips"]["utterance_gap_s"])  # fmt: skip
    write_jsonl(out_dir / "task2_1.jsonl", insts)
    write_jsonl(out_dir / "you_events.jsonl", [e for m in meetings for e in m["you_events.jsonl"]])
    write_jsonl(out_dir / "candidates.jsonl", [c for m in meetings for c in m["candidates.jsonl"]])
    write_jsonl(out_dir / "report.jsonl", report)
    note = info["note"] if not info["present"] else None
    write_json(out_dir / "source.json", {"source": source, "present": info["present"], "mode": info["mode"], "note": note,
                                         "meetings": list(src.meetings), "modality": src.modality,
                                         "instances": {"task2_1": {s: sum(i["split"] == s for i in insts) for s in ("test", "dev")}},
                                         "not_instances": len(report)})  # fmt: skip
    if note:
        typer.echo(f"instances {source}: none; note: {note}")
    else:
        typer.echo(f"instances {source}: {len(insts)} Task 2.1 instance(s), {len(report)} report entr(ies) -> {out_dir}")


@meetingtom_app.command("consolidate")
def consolidate_cmd(
    source_dir: list[Path] = Opt(..., "--source-dir", help="a source's instance folder (repeatable)"),
    out_dir: Path = Opt(..., help="data/processed/meetingtom: test.jsonl, dev.jsonl, tasks/<task>.jsonl"),
) -> None:
    """One JSON-lines file per task (B.5; test split) and the test and dev splits of every task,
    which the shared stages (infer, score) read."""
    from socialbench.paths import check_io

    check_io({"--source-dir": source_dir}, {"--out-dir": out_dir}, folders=("--source-dir", "--out-dir"))
    from socialbench.io import write_jsonl
    from socialbench.meetingtom.instances import TASK, load_instances

    insts = sorted((i for d in source_dir for i in load_instances(d / f"{TASK}.jsonl")), key=lambda i: i["id"])
    ids = [i["id"] for i in insts]
    if len(set(ids)) != len(ids):
        dup = next(x for x in ids if ids.count(x) > 1)
        raise SocialbenchError(f"instance id {dup} comes from two sources; each source's ids must differ")
    for split in ("test", "dev"):
        write_jsonl(out_dir / f"{split}.jsonl", [i for i in insts if i["split"] == split])
    write_jsonl(out_dir / "tasks" / f"{TASK}.jsonl", [i for i in insts if i["split"] == "test"])
    typer.echo(f"consolidate: {sum(i['split'] == 'test' for i in insts)} test, {sum(i['split'] == 'dev' for i in insts)} dev -> {out_dir}")
