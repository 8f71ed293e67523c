"""``socialbench meetingtom ...``: MeetingToM data commands, each with explicit paths.

Mounted on the main app as ``app.add_typer(meetingtom_app, name="meetingtom")``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Optional

import typer

from socialbench.errors import ConfigError

meetingtom_app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                             help="MeetingToM data: AMI annotations, you events, candidate mining.")  # fmt: skip
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
