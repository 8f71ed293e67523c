"""Media stage wall times (a benchmark, not a test).

On a generated 60 s 1280x720 25 fps H.264 clip (and five such views) whose frames encode their own
index, three jobs are timed, each against two baselines measured in the same run ((a) and (b) also
on the same clip with x264's default 10 s keyframe interval, rows a' and b'):

  (a) 16 uniformly spaced frames        (b) frames at 0.5 fps          (c) a 50 s cut of five
      (longest side 448, PNG)               (longest side 448, PNG)        synchronized views plus
                                                                           the 2x2 mosaic of four

* reference: ONE hand-written ffmpeg command line doing the same job (the practical lower bound:
  it knows the frame numbers in advance, checks nothing, writes no manifest);
* naive: one ffmpeg process per frame (a, b) or per output file (c). For (a) and (b) two naive
  variants are timed: "exact" selects the frame by number (``select=eq(n,K)``, decodes from the
  start, the same frames as ours), "seek" seeks to its time (``-ss t -i``, decodes from the
  preceding keyframe).

"ours" is socialbench.media: frames through the content-addressed cache (cold = empty cache,
warm = rerun hitting it), the cut through ``cut_views``. Targets: ours within 1.3x of the
reference, (a) at least 3x faster than naive, warm rerun under 5% of cold.

Usage: python perf/bench_media.py [--seconds 60] [--repeat 3] [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # for tests.helpers

from socialbench.core.tools import executable  # noqa: E402
from socialbench.media.cache import FrameCache  # noqa: E402
from socialbench.media.clips import Mosaic, build_mosaic, cut_views, label_font  # noqa: E402
from socialbench.media.encode import EncodeSettings  # noqa: E402
from socialbench.media.probe import video_timeline  # noqa: E402
from socialbench.media.run import tool_identity  # noqa: E402
from socialbench.media.sampling import FrameSampling, fit_size, fps_indices, uniform_indices  # noqa: E402
from socialbench.media.synth import read_index  # noqa: E402
from tests.helpers.media_synth import decode_all_frames, generate_indexed_video  # noqa: E402

FF = executable("ffmpeg")
SIZE = (1280, 720)
FPS = 25
MAX_SIDE = 448
PANEL = (640, 360)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run(args: list[str]) -> None:
    proc = subprocess.run(args, capture_output=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)}\nfailed: {proc.stderr.decode(errors='replace')[-2000:]}")


def generate(work: Path, seconds: int) -> tuple[Path, Path, list[Path]]:
    """Five views with a keyframe every 2 s (the first is also the clip) and the same clip with
    x264's default 10 s keyframe interval (cached in ``work`` between runs of this script)."""
    enc = EncodeSettings(preset="veryfast", crf=23, threads=0, keyframe_interval_s=None)  # camera-like stream
    frames = seconds * FPS
    paths = [work / f"view{i}-{seconds}s.mp4" for i in range(5)]
    long_gop = work / f"clip-gop250-{seconds}s.mp4"
    for p, gop in [(p, 50) for p in paths] + [(long_gop, 250)]:
        if not p.exists():
            print(f"generating {p.name} ...", file=sys.stderr)
            generate_indexed_video(p, frames=frames, fps=FPS, size=SIZE, encode=enc, gop=gop)
    return paths[0], long_gop, paths


# -- reference and naive command lines, written out as a person would type them -------------------


def reference_select(video: Path, indices: list[int], out: Path) -> None:
    w, h = fit_size(*SIZE, MAX_SIDE)
    expr = "+".join(f"eq(n\\,{i})" for i in indices)
    run(
        [
            FF,
            "-hide_banner",
            "-loglevel",
            "error",
            "-i",
            str(video),
            "-vf",
            f"select={expr},scale={w}:{h}",
            "-fps_mode",
            "passthrough",
            "-y",
            str(out / "%03d.png"),
        ]
    )


def reference_fps(video: Path, fps: str, out: Path) -> None:
    w, h = fit_size(*SIZE, MAX_SIDE)
    run(
        [
            FF,
            "-hide_banner",
            "-loglevel",
            "error",
            "-i",
            str(video),
            "-vf",
            f"fps={fps},scale={w}:{h}",
            "-y",
            str(out / "%03d.png"),
        ]
    )


def naive_exact(video: Path, indices: list[int], out: Path) -> None:
    w, h = fit_size(*SIZE, MAX_SIDE)
    for i in indices:
        run(
            [
                FF,
                "-hide_banner",
                "-loglevel",
                "error",
                "-i",
                str(video),
                "-vf",
                f"select=eq(n\\,{i}),scale={w}:{h}",
                "-frames:v",
                "1",
                "-y",
                str(out / f"{i:05d}.png"),
            ]
        )


def naive_seek(video: Path, times: list[float], out: Path) -> None:
    w, h = fit_size(*SIZE, MAX_SIDE)
    for k, t in enumerate(times):
        run(
            [
                FF,
                "-hide_banner",
                "-loglevel",
                "error",
                "-ss",
                f"{t:.6f}",
                "-i",
                str(video),
                "-vf",
                f"scale={w}:{h}",
                "-frames:v",
                "1",
                "-y",
                str(out / f"{k:05d}.png"),
            ]
        )


def _x264() -> list[str]:
    e = EncodeSettings()
    return [
        "-c:v",
        e.codec,
        "-preset",
        e.preset,
        "-crf",
        str(e.crf),
        "-pix_fmt",
        e.pix_fmt,
        "-threads",
        str(e.threads),
        "-force_key_frames",
        f"expr:gte(t,n_forced*{e.keyframe_interval_s:g})",
    ]


def reference_cut(views: list[Path], start: float, end: float, out: Path) -> None:
    font = label_font()
    pw, ph = PANEL
    args = [FF, "-hide_banner", "-loglevel", "error"]
    for v in views:
        args += ["-ss", str(start), "-t", str(end - start), "-i", str(v)]
    graph = []
    for i in range(1, 5):
        graph.append(f"[{i}:v]split=2[c{i}][m{i}]")
        graph.append(
            f"[m{i}]scale={pw}:{ph}:flags=bicubic+accurate_rnd+full_chroma_int,setsar=1"
            f",drawtext=fontfile={font}:text={'ABCD'[i - 1]}:fontsize={ph // 8}"
            f":fontcolor=white:box=1:boxcolor=black:boxborderw={ph // 60}:x={ph // 40}:y={ph // 40}[p{i}]"
        )
    graph.append("[p1][p2][p3][p4]xstack=inputs=4:layout=0_0|w0_0|0_h0|w0_h0[mosaic]")
    args += ["-filter_complex", ";".join(graph)]
    args += ["-map", "0:v", *_x264(), "-y", str(out / "v0.mp4")]
    for i in range(1, 5):
        args += ["-map", f"[c{i}]", *_x264(), "-y", str(out / f"v{i}.mp4")]
    args += ["-map", "[mosaic]", *_x264(), "-y", str(out / "mosaic.mp4")]
    run(args)


def naive_cut(views: list[Path], start: float, end: float, out: Path) -> None:
    for i, v in enumerate(views):
        run(
            [
                FF,
                "-hide_banner",
                "-loglevel",
                "error",
                "-ss",
                str(start),
                "-t",
                str(end - start),
                "-i",
                str(v),
                *_x264(),
                "-y",
                str(out / f"v{i}.mp4"),
            ]
        )
    build_mosaic(views[1:], out / "mosaic.mp4", start=start, end=end, panel=PANEL)  # the mosaic: one more process


# -- ours ----------------------------------------------------------------------------------------


def fresh_cache(root: Path, memo_from: Path) -> FrameCache:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    shutil.copyfile(memo_from / "tool-ids.json", root / "tool-ids.json")  # the one-time ffmpeg hash
    return FrameCache(root)


def check_frames(manifest, expected: list[int]) -> None:
    got = [read_index(np.asarray(Image.open(p).convert("RGB"))) for p in manifest.paths()]
    if got != expected or [f.index for f in manifest.frames] != expected:
        sys.exit(f"wrong frames: expected {expected}, decoded {got}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=60, help="length of the generated clip and views")
    ap.add_argument("--cut", type=float, default=50.0, help="length of the cut in (c)")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of (a) and (b); (c) runs once per variant")
    ap.add_argument("--work", type=Path, default=REPO / ".cache" / "socialbench" / "bench_media")
    ap.add_argument("--json", type=Path, default=None, help="also write the measurements here")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    clip, clip250, views = generate(args.work, args.seconds)
    for v in [*views, clip250]:  # read every file once so the page cache treats all variants alike
        v.read_bytes()
    memo = args.work / "memo"
    memo.mkdir(exist_ok=True)
    tool_identity(memo)

    tl = video_timeline(clip)
    uni = uniform_indices(tl.frame_count, 16)
    half = fps_indices(list(tl.times), tl.end, Fraction(1, 2))
    jobs = {}
    for key, video, gop in (("", clip, 50), ("'", clip250, 250)):
        jobs["a" + key] = (
            f"16 uniform frames, GOP {gop}",
            video,
            FrameSampling.uniform(16, MAX_SIDE),
            uni,
            lambda o, v=video: reference_select(v, uni, o),
        )
        jobs["b" + key] = (
            f"0.5 fps frames, GOP {gop}",
            video,
            FrameSampling.at_fps("1/2", MAX_SIDE),
            half,
            lambda o, v=video: reference_fps(v, "0.5", o),
        )
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)

        def out(name: str) -> Path:
            d = scratch / name
            if d.exists():
                shutil.rmtree(d)
            d.mkdir(parents=True)
            return d

        for key, (label, video, sampling, indices, reference) in jobs.items():
            cold, warm, ref, exact, seek = [], [], [], [], []
            for r in range(args.repeat):
                ref.append(timed(lambda: reference(out("ref"))))
                cache = fresh_cache(scratch / "cache", memo)
                cold.append(timed(lambda: cache.frames(video, sampling)))
                manifest = cache.frames(video, sampling)
                check_frames(manifest, indices)
                warm.append(timed(lambda: FrameCache(scratch / "cache").frames(video, sampling)))
                if r == 0:  # the naive variants are slow; once is enough to see the gap
                    exact.append(timed(lambda: naive_exact(video, indices, out("naive"))))
                    seek.append(timed(lambda: naive_seek(video, [float(tl.times[i]) for i in indices], out("seek"))))
            results[key] = {
                "label": label,
                "frames": len(indices),
                "reference_s": statistics.median(ref),
                "cold_s": statistics.median(cold),
                "warm_s": statistics.median(warm),
                "naive_exact_s": exact[0],
                "naive_seek_s": seek[0],
            }
            print(json.dumps({key: results[key]}), file=sys.stderr)

        start = min(5.0, (args.seconds - args.cut) / 2)
        end = start + args.cut
        ref_c = timed(lambda: reference_cut(views, start, end, out("refcut")))
        o = out("ours")
        mosaic = Mosaic(o / "mosaic.mp4", views=(1, 2, 3, 4), panel=PANEL)
        ours_c = timed(lambda: cut_views(views, start, end, [o / f"v{i}.mp4" for i in range(5)], mosaic=mosaic))
        first = [read_index(f) for f in decode_all_frames(o / "v0.mp4")[:1]]
        if first != [int(start * FPS)]:
            sys.exit(f"cut starts at frame {first}, expected {int(start * FPS)}")
        naive_c = timed(lambda: naive_cut(views, start, end, out("naivecut")))
        results["c"] = {
            "label": f"{args.cut:g} s cut of 5 views + mosaic",
            "frames": int(args.cut * FPS),
            "reference_s": ref_c,
            "cold_s": ours_c,
            "warm_s": float("nan"),
            "naive_exact_s": naive_c,
            "naive_seek_s": float("nan"),
        }

    print(markdown(results, args))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", "utf-8")


def markdown(results: dict[str, dict], args: argparse.Namespace) -> str:
    rows = [
        f"Clip: {args.seconds} s, {SIZE[0]}x{SIZE[1]}, {FPS} fps H.264 (x264 veryfast, crf 23, a keyframe every 50"
        " or 250 frames); frames scaled to"
        f" longest side {MAX_SIDE} (PNG); cut: {args.cut:g} s of 5 views, mosaic panels {PANEL[0]}x{PANEL[1]}, x264"
        " veryfast"
        f" crf 18 one thread. Median of {args.repeat} for (a), (b); one run for (c) and the naive variants.",
        "",
        "| job | reference | ours (cold) | ours / reference | naive exact | naive / ours | naive seek | seek / ours"
        " | warm rerun | warm / cold |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, r in results.items():

        def s(v: float) -> str:
            return "-" if v != v else f"{v:.2f} s"

        def x(a: float, b: float, pct: bool = False) -> str:
            if a != a or b != b:
                return "-"
            return f"{100 * a / b:.1f} %" if pct else f"{a / b:.2f}x"

        rows.append(
            f"| ({key}) {r['label']} | {s(r['reference_s'])} | {s(r['cold_s'])} | {x(r['cold_s'], r['reference_s'])}"
            f" | {s(r['naive_exact_s'])} | {x(r['naive_exact_s'], r['cold_s'])} | {s(r['naive_seek_s'])}"
            f" | {x(r['naive_seek_s'], r['cold_s'])} | {s(r['warm_s'])} | {x(r['warm_s'], r['cold_s'], pct=True)} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    main()
