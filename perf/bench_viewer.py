"""The trace viewer at the MoCA paper's size (issue 32.2; a benchmark, not a test).

In a fresh work folder: the paper's 3,108 MoCA test instances (936/1,179/993 affection/intent/stance;
878 video-text with 8 sampled frames each, the rest image-text, each with an image of its own drawn
here), answered by real `socialbench infer` runs on CPU: the random baseline (direct) and the CoDAR
test double (codar_script: direct, codar and, with --runs, CoDAR's ablations), all on one request
cache. Then `socialbench viewer --results-dir` writes every run's page, shards and the shared media,
and Chromium (headless, from disk) opens the largest page.

Reported, against references measured in the same run:

* the viewer folder's size against the traces' (target: not larger), the largest file (target:
  25 MB at most), the thumbnails stored against the media references of every run's rows;
* the size the old self-contained pages would have had (the same rows with every thumbnail
  embedded again as a ``data:`` URI in each page);
* the time to the first rows drawn in Chromium (target: under 3 s): the page's own
  ``data-first-ms`` (from navigation start) and Chromium's wall time for the whole load, against
  Chromium's wall time on an empty page;
* that the filters and the search cover every instance: the count for ``#correct=wrong`` and for a
  search against the truth computed here.

Usage: python perf/bench_viewer.py [--n 3108] [--runs random/direct,codar-check/codar,...] [--work DIR]
       [--json OUT]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = {"affection": 936, "intent": 1179, "stance": 993}
VIDEO = 878
RUNS = ["random/direct", "codar-check/direct", "codar-check/codar", "codar-check/codar__wo_step5"]
MB = 1024 * 1024


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO / "src") + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e.update(MLFLOW_DISABLE_TELEMETRY="true", DO_NOT_TRACK="true", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return e


def make_data(work: Path, n: int) -> list[dict]:
    """``n`` MoCA-format instances in the paper's proportions, with their images and frames."""
    from PIL import Image, ImageDraw

    from socialbench.moca.schema.taxonomy import load_taxonomy

    tax = load_taxonomy()
    media = work / "data" / "media"
    media.mkdir(parents=True, exist_ok=True)
    scale = n / sum(SCENARIOS.values())
    plan = [s for s, c in SCENARIOS.items() for _ in range(round(c * scale))][:n]
    plan += ["stance"] * (n - len(plan))
    videos = round(VIDEO * scale)
    recs = []
    for k, scenario in enumerate(plan):
        iid = f"paper-{k:05d}"
        colour = ((37 * k) % 256, (91 * k) % 256, (53 * k) % 256)
        rec = {
            "id": iid,
            "source": "bench_viewer",
            "modality": "image_text",
            "text": f'"case {k}: what a lovely way to treat people, said the {scenario} speaker" #day{k % 97}',
            "transcript": None,
            "media": [f"data/media/{iid}.jpg"],
            "scenario": scenario,
            "domain": "peer",
            "culture": "general context",
            "subject_options": ["the speaker", "the coach", "the fan", "the referee"],
            "target_options": ["the player", "the crowd", "the team", "the press"],
            "subject": "the speaker",
            "target": "the player",
            "mechanism": tax.mechanism_names(scenario)[k % 2],
            "label": tax.label_names(scenario)[k % 3],
        }
        if (k + 1) * videos // n > k * videos // n:  # evenly spread: exactly ``videos`` of them
            rec.update(modality="video_text", media=[f"data/media/{iid}.mp4"], transcript=f"A: case {k}.\nB: Sorry?")
            rec["frames"] = []
            for j in range(8):
                f = Image.new("RGB", (320, 180), colour)
                fd = ImageDraw.Draw(f)
                fd.ellipse((20 + 30 * j, 40, 100 + 30 * j, 120), fill=(250, 220, (40 * j) % 256))
                fd.text((8, 160), f"{iid} frame {j}", fill=(255, 255, 255))  # every frame its own bytes
                p = media / f"{iid}-f{j}.jpg"
                f.save(p, quality=85)
                rec["frames"].append(
                    {
                        "path": f"data/media/{p.name}",
                        "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                        "index": 10 * j,
                        "timestamp": 0.4 * j,
                    }
                )
        else:
            img = Image.new("RGB", (640, 480), colour)
            d = ImageDraw.Draw(img)
            d.ellipse((80 + k % 200, 80, 240 + k % 200, 240), fill=(240, 240, 240))
            d.rectangle((360, 120, 560, 400), fill=((k * 7) % 256, 30, 30))
            d.text((20, 440), iid, fill=(255, 255, 255))
            img.save(media / f"{iid}.jpg", quality=85)
        recs.append(rec)
    (work / "test.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
    ablations = "wo_step5: {table: table5, label: 'w/o Step 5', stages: [observer, query, context, conflict, decoder]}"
    (work / "params.yaml").write_text(
        "seed: 7\ncache: {path: requests.sqlite}\n"
        f"moca: {{methods: [direct], retrieval: {{retriever: none}}, ablations: {{{ablations}}}}}\n"
        "models:\n  random: {backend: random, category: baseline}\n"
        "  codar-check: {backend: codar_script, category: pipeline check}\n"
    )
    return recs


def run(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"bench_viewer: {' '.join(cmd)} failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return time.perf_counter() - start


def infer(work: Path, runs: list[str]) -> dict[str, float]:
    times = {}
    for r in runs:
        model, method = r.split("/")
        out = work / "results"
        for kind in ("predictions", "traces", "runs"):
            (out / kind / "moca" / model).mkdir(parents=True, exist_ok=True)
        times[r] = run(
            [
                "socialbench",
                "infer",
                "--benchmark",
                "moca",
                "--instances",
                "test.jsonl",
                "--model",
                model,
                "--method",
                method,
                "--params",
                "params.yaml",
                "--cache",
                "requests.sqlite",
                "--no-progress",
                "--out",
                f"results/predictions/moca/{r}.jsonl",
                "--trace",
                f"results/traces/moca/{r}.jsonl",
                "--stats",
                f"results/runs/moca/{r}.json",
            ],
            work,
        )  # fmt: one call per run, as the pipeline makes it
    return times


def folder_size(path: Path) -> tuple[int, int, Path | None]:
    files = [p for p in path.rglob("*") if p.is_file()]
    biggest = max(files, key=lambda p: p.stat().st_size, default=None)
    return sum(p.stat().st_size for p in files), len(files), biggest


def old_page_size(page: Path, media: Path) -> int:
    """The self-contained page the old viewer wrote for the same rows: every thumbnail a base64
    ``data:`` URI in the row (each page its own copy), the rows inline, no index."""
    from socialbench.results.viewer_page import read_shard_js

    shell = len(page.read_bytes())
    rows = 0
    for shard in sorted((page.parent / f"{page.stem}.shards").glob("*.js")):
        for h in read_shard_js(shard.read_text())[1]:
            rows += len(h.encode("utf-8"))
            for name in re.findall(r'src="\.\./media/([0-9a-f]{64}\.jpg)"', h):
                size = (media / name).stat().st_size
                rows += len("data:image/jpeg;base64,") + 4 * ((size + 2) // 3) - len(f"../media/{name}")
    return shell + rows


def chromium(url: str, profile: Path, height: int = 900) -> tuple[float, str]:
    cmd = [
        "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size=1280,{height}",
        "--virtual-time-budget=60000",
        "--dump-dom",
        url,
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - start, proc.stdout


def browser(work: Path, page: Path, truth: dict[str, int]) -> dict:
    """Chromium on the page from disk: the first rows' time, and the counts of a filter and a search."""
    profile = work / "chrome-profile"
    blank = work / "blank.html"
    blank.write_text("<!DOCTYPE html><title>blank</title><p>blank</p>")
    chromium(blank.as_uri(), profile)  # first start: the profile is made, not measured
    blank_s, _ = chromium(blank.as_uri(), profile)
    wall, dom = chromium(page.as_uri(), profile)
    first = re.search(r'data-first-ms="(\d+)"', dom)
    drawn = len(re.findall(r'<article class="row', dom))
    shown = re.search(r'<strong id="shown">(\d+)</strong>', dom)
    out = {
        "blank_wall_s": round(blank_s, 2),
        "page_wall_s": round(wall, 2),
        "first_rows_ms": int(first.group(1)) if first else None,
        "rows_drawn_first": drawn,
        "count": int(shown.group(1)) if shown else None,
    }
    for name, frag in (("wrong", "correct=wrong"), ("search", f"q={truth['term']}")):
        _, dom = chromium(page.as_uri() + "#" + frag, profile)
        m = re.search(r'<strong id="shown">(\d+)</strong>', dom)
        out[f"count_{name}"] = int(m.group(1)) if m else None
    return out


def truth_of(work: Path, page: Path, recs: list[dict]) -> dict:
    """The expected counts: wrong instances (the page's index says so per row, checked against the
    scorer's rule through the rows) and the instances whose row text has the search term."""
    from html import unescape

    from socialbench.results.viewer_page import read_shard_js

    index = json.loads(page.read_text().split('id="sb-index">')[1].split("</script>")[0])
    term = "case 31"  # in the instance text of case 31, 310-319, 3100-3107
    texts = []
    for shard in sorted((page.parent / f"{page.stem}.shards").glob("*.js")):
        texts += [unescape(re.sub(r"<[^>]*>", " ", h)).lower() for h in read_shard_js(shard.read_text())[1]]
    return {
        "term": term.replace(" ", "+"),
        "wrong": sum(1 for r in index["rows"] if r[2] == "wrong"),
        "search": sum(1 for t in texts if term in t),
        "instances": len(recs),
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3108, help="MoCA test instances (the paper: 3,108)")
    ap.add_argument("--runs", default=",".join(RUNS), help="MODEL/METHOD runs (models: random, codar-check)")
    ap.add_argument("--work", type=Path, default=None, help="work folder (default: a fresh temporary one)")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here too")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_viewer."))
    work.mkdir(parents=True, exist_ok=True)
    runs = args.runs.split(",")
    print(f"bench_viewer: work folder {work}", file=sys.stderr)
    recs = make_data(work, args.n)
    infer_s = infer(work, runs)
    shutil.rmtree(work / "results" / "viewer", ignore_errors=True)
    cmd = ["socialbench", "viewer", "--benchmark", "moca", "--params", "params.yaml", "--instances", "test.jsonl"]
    viewer_s = run(cmd + ["--results-dir", "results"] + [a for r in runs for a in ("--run", r)], work)
    vdir, tdir = work / "results" / "viewer" / "moca", work / "results" / "traces" / "moca"
    v_bytes, v_files, biggest = folder_size(vdir)
    t_bytes, _, _ = folder_size(tdir)
    media_files = len(list((vdir / "media").glob("*.jpg")))
    media_refs = 0
    pages = sorted(vdir.glob("*/*.html"))
    for page in pages:
        from socialbench.results.viewer_page import read_shard_js

        for shard in sorted((page.parent / f"{page.stem}.shards").glob("*.js")):
            media_refs += sum(h.count('src="../media/') for h in read_shard_js(shard.read_text())[1])
    old = {str(p.relative_to(vdir)): old_page_size(p, vdir / "media") for p in pages}
    largest = max(pages, key=lambda p: folder_size(p.parent / f"{p.stem}.shards")[0])
    result = {
        "instances": args.n,
        "video_text": sum(r["modality"] == "video_text" for r in recs),
        "runs": runs,
        "infer_s": {k: round(v, 1) for k, v in infer_s.items()},
        "viewer_s": round(viewer_s, 1),
        "traces_mb": round(t_bytes / MB, 1),
        "viewer_mb": round(v_bytes / MB, 1),
        "viewer_files": v_files,
        "largest_file": str(biggest.relative_to(vdir)) if biggest else None,
        "largest_file_mb": round(biggest.stat().st_size / MB, 2) if biggest else None,
        "media_files": media_files,
        "media_refs": media_refs,
        "media_mb": round(folder_size(vdir / "media")[0] / MB, 1),
        "old_pages_mb": round(sum(old.values()) / MB, 1),
        "old_largest_page_mb": round(max(old.values()) / MB, 1),
        "page": str(largest.relative_to(vdir)),
    }
    if shutil.which("chromium"):
        truth = truth_of(work, largest, recs)
        result["browser"] = browser(work, largest, truth)
        result["truth"] = truth
    else:
        result["browser"] = "chromium not installed (scripts/check_viewer.sh installs it)"
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    ok = v_bytes <= t_bytes and (biggest is None or biggest.stat().st_size <= 25 * MB)
    b = result["browser"]
    if isinstance(b, dict):
        ok = ok and (b["first_rows_ms"] or 10**9) < 3000 and b["count"] == args.n
        ok = ok and b["count_wrong"] == result["truth"]["wrong"] and b["count_search"] == result["truth"]["search"]
    print(f"bench_viewer: {'targets met' if ok else 'a target is missed'}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
