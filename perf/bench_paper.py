"""The whole pipeline at the papers' sizes, side by side with the demo (issue 32.1; a benchmark, not a test).

Generated data, scripted backends (no GPU, no API): what is measured is the pipeline's own cost at the
papers' counts, not a model's.

- MoCA: the paper's 3,108 test instances (936/1,179/993 affection/intent/stance; 878 video-text, the
  rest image-text; ``moca.demo.scenario_counts`` and ``moca.demo.n_video``) and 310 dev instances, at
  each fraction of ``--sizes`` (the counts scaled, the proportions kept).
- MeetingToM: generated meetings with the paper's per-meeting counts (``meetingtom.demo.clips_per_task``
  ``--clips-per-task`` = 10: ten lean 55 s scenes, 550 s, each mined into one state, one "you" and one
  consensus window: 30 clips a meeting, 10 per task family, so 60 meetings are the paper's 1,800 clips,
  600 per family), ``--meetings`` of them at each size. The paper's 60 do not fit this machine's time:
  the figures at its 1,800 clips are extrapolated linearly from the measured growth between sizes.
- Models: the paper's 15 (bench_pipeline.paper_params: chance and prior baselines on both benchmarks,
  CoDAR test doubles on MoCA) with every method and ablation params define (MoCA: 31 runs; MeetingToM:
  16 runs per baseline), and then one model (the chance baseline) at the largest size, to see what
  grows with the number of runs.

Phases, each a cold or incremental `snakemake --cores 1` (one core: a shared machine):

1. ``demo``: the demo's params, in a fresh copy of the repository;
2. ``paper@<size>``: the paper's models at each size, one copy, each size after the one before (the
   demo release is generated again for the new meeting list, so every meeting's jobs rerun);
3. ``1-model@<largest>``: the same copy, one model: only the jobs that read the runs rerun
   (``--no-one-model``: not run).

Every job Snakemake runs is a ``socialbench`` command (an older commit's closing ``dvc commit`` too); a shim
first on PATH (in the benchmark's temporary folder only: the rules are not changed) runs the real command as its
one child and records its wall time, CPU time and peak RSS (``wait4``'s ``ru_maxrss``: the largest
process of the job, its ffmpeg children included) in ``<work folder>/jobs.jsonl`` as each job ends.
Reported per phase and stage: jobs, wall, CPU, peak RSS; MeetingToM's jobs and each track job's share
of the run; the output sizes per folder, and per top folder (data, results, the DVC cache,
mlartifacts, ...) the bytes of contents and on disk and the files; each viewer folder's size and its
largest page's load in headless Chromium (as perf/bench_viewer.py opens it); and per stage the cost
per instance and how it grows with instances and with runs.

MeetingToM at the paper's 60 meetings alone (issue 41.3; MoCA kept at 2 %, as --quick runs it):
``--no-demo --no-one-model --sizes 0.02 --meetings 60``.

Usage: python perf/bench_paper.py [--sizes 0.1,1.0] [--meetings 6,12] [--clips-per-task 10] [--quick]
       [--no-demo] [--no-one-model] [--json OUT] [--markdown FILE] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "perf"))

from bench_pipeline import paper_params, replace_marked  # noqa: E402
from bench_viewer import chromium  # noqa: E402
from job_shim import LOG_VAR, install  # noqa: E402

from tests.helpers.pipeline import git_snapshot, link_shared, pipeline_env, repo_copy  # noqa: E402

#: The MoCA paper's test split (Table 1) and its dev split.
MOCA_SCENARIOS = {"affection": 936, "intent": 1179, "stance": 993}
MOCA_VIDEO = 878
MOCA_DEV = 310
#: MeetingToM's paper: 60 sessions, 1,800 clips (600 per task family).
MT_MEETINGS, MT_CLIPS = 60, 1800
#: MeetingToM's task families (the clips' ``task``), in its tables' order.
MT_FAMILIES = ("state", "you", "consensus")
# The paper-size meetings' frame rate: the figures in docs/benchmarks.md were measured at it, before the
# embedded demo went to 5 fps, then 2 (docs/decisions/demo-data.md); AMI's own videos are 25 fps.
MT_PAPER_FPS = 10


def moca_counts(fraction: float) -> dict:
    """moca.demo settings for ``fraction`` of the paper's MoCA: scenario counts, video count, dev size."""
    counts = {s: max(1, round(n * fraction)) for s, n in MOCA_SCENARIOS.items()}
    n = sum(counts.values())
    return {
        "n_test": n,
        "scenario_counts": counts,
        "n_video": round(MOCA_VIDEO * n / sum(MOCA_SCENARIOS.values())),
        "n_dev": max(3, round(MOCA_DEV * fraction)),
    }


def meeting_ids(n: int) -> list[str]:
    """ES9000a, ES9000b, ... (the demo's first three first, so the dev meeting ES9000c is among them)."""
    return [f"ES9{k // 4:03d}{'abcd'[k % 4]}" for k in range(n)]


def scaled_params(demo: dict, fraction: float, meetings: int, clips_per_task: int, one_model: bool) -> dict:
    """The paper's models at ``fraction`` of MoCA and ``meetings`` generated meetings, each with
    ``clips_per_task`` clips of every MeetingToM task family (lean scenes of 55 s each)."""
    from socialbench.meetingtom.dataset.demo_script import SCENE_S

    out = paper_params(demo)
    out["moca"]["demo"].update(moca_counts(fraction))
    ids = meeting_ids(max(3, meetings))
    out["meetingtom"]["demo"].update(
        corpus=ids, meetings=ids, seconds=clips_per_task * SCENE_S, clips_per_task=clips_per_task, fps=MT_PAPER_FPS
    )
    if one_model:
        out["models"] = {"chance-1": out["models"]["chance-1"]}
        out["meetingtom"]["tables"]["prompting_models"] = ["chance-1"]
        for b in ("moca", "meetingtom"):  # the option-order runs of the models left
            if out[b].get("robustness"):
                out[b]["robustness"]["models"] = [m for m in out[b]["robustness"]["models"] if m in out["models"]]
    return out


def tree_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def output_sizes(work: Path) -> dict[str, int]:
    """Bytes per output folder: data/<kind>/<name>, results/<kind>/<benchmark> and the stores."""
    sizes = {}
    for top in ("data", "results"):
        for kind in sorted((work / top).iterdir()) if (work / top).is_dir() else []:
            if kind.is_dir() and not kind.is_symlink():
                for sub in sorted(kind.iterdir()):
                    if not sub.is_symlink():
                        sizes[sub.relative_to(work).as_posix()] = tree_size(sub)
    for store in (".snakemake", "mlflow.db", "mlartifacts", ".cache", ".dvc/cache", "dvc.lock"):
        if (work / store).exists():
            sizes[store] = tree_size(work / store)
    return sizes


def stage_of(argv: list[str], prog: str = "socialbench") -> str:
    """A job's stage: the socialbench command (with its subcommand) and, where it names one, its benchmark;
    another program's (the closing `dvc commit`) with its name first."""
    words = [] if prog == "socialbench" else [prog]
    for a in argv[:2]:
        if a.startswith("-"):
            break
        words.append(a)
    if "--benchmark" in argv and argv.index("--benchmark") + 1 < len(argv):
        words.append(argv[argv.index("--benchmark") + 1])
    if "--meeting" in argv or "--meeting-dir" in argv:
        words.append(PER_MEETING)
    return " ".join(words) or "?"


#: The mark of a MeetingToM stage with one job per meeting.
PER_MEETING = "(per meeting)"
#: Those stages, as a --json written before the mark named them.
PER_MEETING_STAGES = {"meetingtom extract", "meetingtom media", "meetingtom clips"}


def stage_totals(jobs: list[dict]) -> dict[str, dict]:
    """Per stage (``stage_of``): jobs, summed wall and CPU seconds, the longest job, the largest job's peak RSS.
    Also what a run's job log holds so far (``python -c 'import bench_paper ...'`` on a running phase)."""
    stages: dict[str, dict] = defaultdict(
        lambda: {"jobs": 0, "wall_s": 0.0, "cpu_s": 0.0, "max_job_s": 0.0, "rss_mb": 0.0}
    )
    for j in jobs:
        s = stages[stage_of(j["argv"], j.get("prog", "socialbench"))]
        s["jobs"] += 1
        s["wall_s"] += j["wall_s"]
        s["cpu_s"] += j["cpu_s"]
        s["max_job_s"] = max(s["max_job_s"], j["wall_s"])
        s["rss_mb"] = max(s["rss_mb"], j["maxrss_mb"])
    return dict(sorted(stages.items()))


def disk_usage(work: Path) -> dict[str, dict]:
    """Per top folder (data, results and the stores): bytes of file contents, bytes on disk (allocated
    blocks) and files; symlinks (../shared) not followed. The DVC cache holds copies (``dvc commit
    --no-relink``), not links, so its bytes come on top of the workspace's."""
    out = {}
    for top in ("data", "results", ".dvc/cache", "mlartifacts", "mlflow.db", ".cache", ".snakemake"):
        path = work / top
        if not path.exists() or path.is_symlink():
            continue
        files = [path] if path.is_file() else [Path(d) / f for d, _, fs in os.walk(path) for f in fs]
        stats = [f.lstat() for f in files if not f.is_symlink()]
        out[top] = {
            "bytes": sum(st.st_size for st in stats),
            "disk_bytes": sum(st.st_blocks * 512 for st in stats),
            "files": len(stats),
        }
    return out


def viewer_figures(work: Path, scratch: Path) -> dict[str, dict]:
    """Per benchmark's viewer folder: bytes, files, pages, the largest file; its largest page (html and
    shards) opened from disk in headless Chromium as perf/bench_viewer.py opens it: the whole load's wall
    time against an empty page's, the page's own time to its first rows (``data-first-ms``), the rows
    drawn first and the count shown."""
    out: dict[str, dict] = {}
    blank_s = None
    for folder in sorted(p for p in (work / "results/viewer").glob("*") if p.is_dir()):
        files = [p for p in folder.rglob("*") if p.is_file()]
        pages = [p for p in files if p.suffix == ".html"]
        biggest = max(files, key=lambda p: p.stat().st_size, default=None)

        def weight(page: Path) -> int:
            shards = page.with_suffix(".shards")
            return page.stat().st_size + (tree_size(shards) if shards.is_dir() else 0)

        page = max(pages, key=weight, default=None)
        fig: dict = {
            "bytes": sum(p.stat().st_size for p in files),
            "files": len(files),
            "pages": len(pages),
            "largest_file": biggest.relative_to(folder).as_posix() if biggest else None,
            "largest_file_bytes": biggest.stat().st_size if biggest else 0,
            "largest_page": page.relative_to(folder).as_posix() if page else None,
            "largest_page_bytes": weight(page) if page else 0,
        }
        if page is not None and shutil.which("chromium"):
            profile = scratch / "chrome-profile"
            if blank_s is None:
                blank = scratch / "blank.html"
                blank.write_text("<!DOCTYPE html><title>blank</title><p>blank</p>")
                chromium(blank.as_uri(), profile)  # first start: the profile is made, not measured
                blank_s, _ = chromium(blank.as_uri(), profile)
            wall, dom = chromium(page.as_uri(), profile)
            first = re.search(r'data-first-ms="(\d+)"', dom)
            shown = re.search(r'<strong id="shown">(\d+)</strong>', dom)
            fig.update(
                blank_wall_s=round(blank_s, 2),
                page_wall_s=round(wall, 2),
                first_rows_ms=int(first.group(1)) if first else None,
                rows_drawn_first=len(re.findall(r'<article class="row', dom)),
                count_shown=int(shown.group(1)) if shown else None,
            )
        elif page is not None:
            fig["browser"] = "chromium not installed (scripts/check_viewer.sh installs it)"
        out[folder.name] = fig
    return out


def run_phase(name: str, work: Path, env: dict[str, str], log: Path) -> dict:
    log.write_text("")
    start = time.perf_counter()
    proc = subprocess.run(["snakemake", "--cores", "1"], cwd=work, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{name}: snakemake failed in {work}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    jobs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    top = max(jobs, key=lambda j: j["maxrss_mb"]) if jobs else None
    phase = {
        "phase": name,
        "snakemake_wall_s": wall,
        "jobs": len(jobs),
        "stages": stage_totals(jobs),
        "peak_rss_mb": top["maxrss_mb"] if top else 0.0,
        "peak_rss_job": " ".join(top["argv"][:6]) if top else None,
        "sizes": output_sizes(work),
        "job_log": jobs,
        "counts": counts(work),
    }
    # measured after the run, not part of it; a failure here loses none of the above
    for key, measure in (("disk", lambda: disk_usage(work)), ("viewer", lambda: viewer_figures(work, log.parent))):
        try:
            phase[key] = measure()
        except Exception as exc:  # noqa: BLE001 - a benchmark's extra figure, reported in its place
            phase[key] = {"error": f"{type(exc).__name__}: {exc}"}
    return phase


def counts(work: Path) -> dict:
    """What the phase ran on: MoCA's test instances by modality, MeetingToM's meetings, clips and
    instances by task, and the runs per benchmark."""
    from socialbench.core.config import load_params
    from socialbench.results import layout

    out: dict = {}
    test = work / "data/processed/moca/test.jsonl"
    if test.is_file():
        recs = [json.loads(line) for line in test.read_text().splitlines() if line.strip()]
        out["moca_test"] = len(recs)
        out["moca_video"] = sum(r.get("modality") == "video_text" for r in recs)
    clips = list((work / "data/processed/meetingtom/clips/demo").glob("*/clips.jsonl"))
    by_task: dict[str, int] = defaultdict(int)
    for c in clips:
        for line in c.read_text().splitlines():
            if line.strip():
                by_task[json.loads(line).get("task", "?")] += 1
    out["mt_meetings"] = len(clips)
    out["mt_clips"] = dict(by_task)
    params = load_params(work / "params.yaml")
    out["mt_clips_per_task"] = (params["meetingtom"].get("demo") or {}).get("clips_per_task")
    for b in ("moca", "meetingtom"):
        out[f"{b}_runs"] = len(layout.runs(params, b, params[b]["methods"]))
    out["models"] = len(params["models"])
    return out


MARK_BEGIN = "<!-- bench_paper:begin -->"
MARK_END = "<!-- bench_paper:end -->"


def family_check(counts: dict) -> str:
    """A phase's MeetingToM clips per task family against what the generator promises: ``clips_per_task``
    per family and meeting (the paper's 10 at full size); one line, saying so where they differ."""
    clips, n = counts.get("mt_clips", {}), counts.get("mt_meetings", 0)
    per = ", ".join(f"{f} {clips.get(f, 0)}" for f in MT_FAMILIES)
    k = counts.get("mt_clips_per_task")
    if k is None or not n:
        return f"MeetingToM clips per family: {per} ({n} meetings, the demo's scenes)"
    ok = all(clips.get(f, 0) == k * n for f in MT_FAMILIES)
    return f"MeetingToM clips per family: {per} ({n} meetings x {k}: " + (
        "as generated)" if ok else f"NOT {k * n} each: mining overrides or failed clips?)"
    )


def paper_meetings(counts: dict) -> float:
    """Meetings of this phase's kind that make the paper's 1,800 clips (60 at its 30 a meeting)."""
    per_meeting = sum(counts.get("mt_clips", {}).values()) / counts["mt_meetings"] if counts.get("mt_meetings") else 0
    return MT_CLIPS / per_meeting if per_meeting else MT_MEETINGS


def mb(n: float) -> str:
    return f"{n / 1e6:.1f}" if n < 1e8 else f"{n / 1e6:.0f}"


def growth(phases: list[dict]) -> list[str]:
    """How each stage's CPU grows: with MoCA's instances and MeetingToM's meetings (the two paper
    sizes), and with the runs (the paper's models against one, at the largest size); MeetingToM at the
    paper's 1,800 clips extrapolated linearly in meetings (60 of the paper's 30 clips; per-meeting
    stages: CPU per meeting x those meetings; the others: the line through the two sizes)."""
    paper = [p for p in phases if p["phase"].startswith("paper@")]
    one = next((p for p in phases if p["phase"].startswith("1-model@")), None)
    if len(paper) < 2:
        return []
    a, b = paper[0], paper[-1]
    target = paper_meetings(b["counts"])
    lines = [
        f"Growth per stage (CPU seconds; {a['phase']} -> {b['phase']}: MoCA"
        f" x{b['counts']['moca_test'] / a['counts']['moca_test']:.1f}"
        f" instances, MeetingToM x{b['counts']['mt_meetings'] / a['counts']['mt_meetings']:.1f} meetings"
        + (
            f"; runs at {b['phase']}: MoCA {b['counts']['moca_runs']} vs {one['counts']['moca_runs']}, MeetingToM"
            f" {b['counts']['meetingtom_runs']} vs {one['counts']['meetingtom_runs']} with one model"
            if one
            else ""
        )
        + "; the demo release changes with the meeting list, so every meeting's jobs rerun):",
        "",
        f"| stage | CPU {a['phase']} | CPU {b['phase']} | growth | CPU per MoCA instance, ms "
        f"| CPU {one['phase'] if one else '-'} "
        f"| MeetingToM at the paper's {MT_CLIPS:,} clips ({target:.0f} meetings, extrapolated) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    total60 = 0.0
    for st in sorted(set(a["stages"]) | set(b["stages"])):
        ca = a["stages"].get(st, {}).get("cpu_s", 0.0)
        cb = b["stages"].get(st, {}).get("cpu_s", 0.0)
        per_inst = (
            f"{1000 * cb / b['counts']['moca_test']:.2f}" if "moca" in st and b["counts"].get("moca_test") else ""
        )
        c1 = f"{one['stages'][st]['cpu_s']:.1f}" if one and st in one["stages"] else "-"
        mt60 = ""
        if "meetingtom" in st or "per meeting" in st:
            if PER_MEETING in st or st in PER_MEETING_STAGES:  # the larger size reran every meeting's job
                est = cb / b["counts"]["mt_meetings"] * target
            else:
                ma, mb_ = a["counts"]["mt_meetings"], b["counts"]["mt_meetings"]
                # never below the larger size: a stage whose jobs shrank (the real AMI meetings' jobs ran
                # only in the first phase) does not grow with the demo's meetings
                slope = max(0.0, (cb - ca) / (mb_ - ma)) if mb_ != ma else 0.0
                est = cb + slope * (target - mb_)
            total60 += est
            mt60 = f"{est:.0f} s"
        ratio = f"{cb / ca:.1f}x" if ca else "-"
        lines.append(f"| `{st}` | {ca:.1f} | {cb:.1f} | {ratio} | {per_inst} | {c1} | {mt60} |")
    lines.append(f"| MeetingToM, all stages | | | | | | {total60:.0f} s ({total60 / 60:.0f} min) |")
    return lines


def share_line(p: dict) -> str:
    """A phase's MeetingToM jobs (wall, CPU) and each track job's share of the phase."""
    st = p["stages"]
    wall, cpu = p["snakemake_wall_s"], sum(s["cpu_s"] for s in st.values())
    mt = [s for n, s in st.items() if "meetingtom" in n]
    mt_wall, mt_cpu = sum(s["wall_s"] for s in mt), sum(s["cpu_s"] for s in mt)
    parts = [
        f"MeetingToM's jobs {sum(s['jobs'] for s in mt)}: {mt_wall:.0f} s wall, {mt_cpu:.0f} CPU-s"
        f" ({mt_cpu / 60:.0f} CPU-min); Snakemake between the jobs {wall - sum(s['wall_s'] for s in st.values()):.0f} s"
    ]
    for b in ("moca", "meetingtom"):
        t = st.get(f"track {b}")
        if t:
            parts.append(
                f"track {b}: {t['wall_s']:.1f} s wall, {100 * t['wall_s'] / wall:.1f} % of the run's"
                + (f" ({100 * t['wall_s'] / mt_wall:.1f} % of MeetingToM's jobs')" if mt_wall and b != "moca" else "")
                + f", {t['cpu_s']:.1f} CPU-s, {100 * t['cpu_s'] / cpu:.1f} % of the jobs' CPU"
            )
    return "; ".join(parts)


def disk_table(phases: list[dict]) -> list[str]:
    """Bytes per top folder after each phase: contents / on disk (MB), files."""
    have = [p for p in phases if isinstance(p.get("disk"), dict) and "error" not in p["disk"]]
    if not have:
        return []
    out = ["", "Disk per top folder after each phase: contents / on disk, MB (files):", ""]
    out.append("| folder | " + " | ".join(p["phase"] for p in have) + " |")
    out.append("|---|" + "---:|" * len(have))
    for f in sorted({f for p in have for f in p["disk"]}):
        cells = [
            f"{mb(d['bytes'])} / {mb(d['disk_bytes'])} ({d['files']:,})" if (d := p["disk"].get(f)) else "-"
            for p in have
        ]
        out.append(f"| {f} | " + " | ".join(cells) + " |")
    return out


def viewer_table(phases: list[dict]) -> list[str]:
    """Per phase and benchmark: the viewer folder and its largest page's load in headless Chromium."""
    rows = []
    for p in phases:
        for b, v in (p.get("viewer") or {}).items():
            if not isinstance(v, dict) or "bytes" not in v:  # the measure failed: its error
                rows.append(f"| {p['phase']} | {b} | {v} | | | |")
                continue
            load = (
                f"{v['page_wall_s']:.2f} s (empty page {v['blank_wall_s']:.2f} s), first rows at"
                f" {v['first_rows_ms']} ms, {v['rows_drawn_first']} drawn, count {v['count_shown']}"
                if "page_wall_s" in v
                else v.get("browser", "-")
            )
            rows.append(
                f"| {p['phase']} | {b} | {mb(v['bytes'])} MB ({v['files']:,} files, {v['pages']} pages)"
                f" | {mb(v['largest_file_bytes'])} MB (`{v['largest_file']}`)"
                f" | {mb(v['largest_page_bytes'])} MB (`{v['largest_page']}`) | {load} |"
            )
    if not rows:
        return []
    return [
        "",
        "The viewer (results/viewer/<benchmark>), its largest page opened from disk in headless Chromium:",
        "",
        "| phase | benchmark | folder | largest file | largest page with its shards | Chromium: whole load |",
        "|---|---|---:|---:|---:|---|",
        *rows,
    ]


def markdown(phases: list[dict]) -> str:
    """The figures of one run: phases, stages (wall, CPU, peak RSS) and output sizes, side by side."""
    names = [p["phase"] for p in phases]
    demo = next((p for p in phases if p["phase"] == "demo"), phases[0])
    out = [
        "| phase | models | MoCA test (video) / runs | MeetingToM meetings / clips (state, you, consensus) / runs "
        "| jobs run | `snakemake --cores 1` | CPU of the jobs | peak RSS of a job (which) |",
        "|---|---:|---|---|---:|---:|---:|---|",
    ]
    for p in phases:
        c = p["counts"]
        clips = c.get("mt_clips", {})
        cpu = sum(s["cpu_s"] for s in p["stages"].values())
        out.append(
            f"| {p['phase']} | {c['models']} | {c.get('moca_test', 0)} ({c.get('moca_video', 0)}) / {c['moca_runs']} "
            f"| {c['mt_meetings']} / {sum(clips.values())} ({clips.get('state', 0)}, {clips.get('you', 0)}, "
            f"{clips.get('consensus', 0)}) / {c['meetingtom_runs']} | {p['jobs']} "
            f"| {p['snakemake_wall_s']:.0f} s ({p['snakemake_wall_s'] / demo['snakemake_wall_s']:.1f}x demo) "
            f"| {cpu:.0f} s | {p['peak_rss_mb']:.0f} MB (`{p['peak_rss_job']}`) |"
        )
    out += ["", *(f"- {p['phase']}: {family_check(p['counts'])}" for p in phases)]
    out += ["", *(f"- {p['phase']}: {share_line(p)}" for p in phases)]
    stages = sorted({s for p in phases for s in p["stages"]})
    out += ["", "Per stage: wall / CPU seconds over its jobs (jobs), peak RSS of one job:", ""]
    out.append("| stage | " + " | ".join(names) + " |")
    out.append("|---|" + "---:|" * len(names))
    for st in stages:
        cells = []
        for p in phases:
            s = p["stages"].get(st)
            cells.append(f"{s['wall_s']:.1f} / {s['cpu_s']:.1f} s ({s['jobs']}), {s['rss_mb']:.0f} MB" if s else "-")
        out.append(f"| `{st}` | " + " | ".join(cells) + " |")
    out += ["", *growth(phases)]
    out += disk_table(phases) + viewer_table(phases)
    folders = sorted({f for p in phases for f in p["sizes"]})
    out += ["", "Output sizes (MB) after each phase (a phase's copy holds what the phases before it left):", ""]
    out.append("| folder | " + " | ".join(names) + " |")
    out.append("|---|" + "---:|" * len(names))
    for f in folders:
        if max(p["sizes"].get(f, 0) for p in phases) < 100_000:
            continue
        out.append(f"| {f} | " + " | ".join(mb(p["sizes"][f]) if f in p["sizes"] else "-" for p in phases) + " |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0.1,1.0", help="fractions of the MoCA paper's size, ascending")
    ap.add_argument("--meetings", default="6,12", help="MeetingToM meetings at each size")
    ap.add_argument(
        "--clips-per-task",
        type=int,
        default=10,
        help="MeetingToM clips per task family per generated meeting (the paper's 10; meetings last 55 s each)",
    )
    ap.add_argument(
        "--quick", action="store_true", help="a smoke run: 2%% and 5%%, 3 and 4 meetings of 2 clips per family"
    )
    ap.add_argument("--no-demo", action="store_true", help="skip the demo phase")
    ap.add_argument("--no-one-model", action="store_true", help="skip the one-model phase after the paper sizes")
    ap.add_argument("--json", type=Path, help="write every phase's figures here")
    ap.add_argument("--markdown", type=Path, help="replace the marked section of this file with the tables")
    ap.add_argument("--from-json", type=Path, help="no run: the tables of an earlier run's --json")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = ap.parse_args(argv)
    if args.from_json:
        table = markdown(json.loads(args.from_json.read_text()))
        print(table)
        if args.markdown:
            replace_marked(args.markdown, MARK_BEGIN, MARK_END, table)
        return 0
    if args.quick:
        args.sizes, args.meetings, args.clips_per_task = "0.02,0.05", "3,4", 2
    sizes = [float(x) for x in args.sizes.split(",")]
    meetings = [int(x) for x in args.meetings.split(",")]
    if len(sizes) != len(meetings):
        sys.exit("--sizes and --meetings need as many values")
    root = Path(tempfile.mkdtemp(prefix="bench-paper-")) if args.keep is None else args.keep
    root.mkdir(parents=True, exist_ok=True)
    bindir, log = root / "bin", root / "jobs.jsonl"
    bindir.mkdir(exist_ok=True)
    print(f"work folder: {root}", flush=True)
    # every job's command: socialbench, and an older commit's closing `dvc commit`
    install(
        bindir,
        {p: shutil.which(p, path=str(Path(sys.executable).parent)) or shutil.which(p) for p in ("socialbench", "dvc")},
    )
    phases = []

    def emit(p: dict) -> None:
        phases.append(p)
        print(json.dumps({k: v for k, v in p.items() if k not in ("sizes", "job_log")}), flush=True)
        print(f"{p['phase']}: {family_check(p['counts'])}", flush=True)
        if args.json:
            args.json.write_text(json.dumps(phases, indent=1))

    try:
        copies = (["demo"] if not args.no_demo else []) + ["paper"]
        works = {}
        for c in copies:
            work = root / c / "repo"
            work.mkdir(parents=True)
            repo_copy(work)
            link_shared(work)
            works[c] = work
        for c, work in works.items():
            env = {**pipeline_env(work), LOG_VAR: str(log)}
            env["PATH"] = f"{bindir}{os.pathsep}{env['PATH']}"
            demo = yaml.safe_load((work / "params.yaml").read_text())
            if c == "demo":
                git_snapshot(work, env)
                emit(run_phase("demo", work, env, log))
                continue
            plan = [(f"paper@{s:g}", s, m, False) for s, m in zip(sizes, meetings)]
            if not args.no_one_model:
                plan.append((f"1-model@{sizes[-1]:g}", sizes[-1], meetings[-1], True))
            for name, s, m, one in plan:
                params = scaled_params(demo, s, m, args.clips_per_task, one)
                # written out without YAML aliases (params.yaml refuses them)
                (work / "params.yaml").write_text(yaml.safe_dump(json.loads(json.dumps(params)), sort_keys=False))
                # its dvc.yaml written, then everything committed (the stages record the commit)
                subprocess.run(["snakemake", "-n", "--quiet", "--cores", "1"], cwd=work, env=env, capture_output=True)
                git_snapshot(work, env)
                emit(run_phase(name, work, env, log))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    table = markdown(phases)
    print(table)
    if args.markdown:
        replace_marked(args.markdown, MARK_BEGIN, MARK_END, table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
