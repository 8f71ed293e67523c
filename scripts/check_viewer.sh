#!/usr/bin/env bash
# Checks the trace viewer (`socialbench viewer`) in a real headless browser: Chromium from Debian's
# packages (installed with apt-get when absent; needs root). It makes a small run of its own (a few
# MoCA-format instances with images, frames and one text full of markup, answered by the random
# baseline, plus a multi-stage run: CoDAR on its scripted test double when this checkout has both,
# else a hand-written multi-stage trace of CoDAR's shape, named as a fixture in it), builds the pages
# (out/<run>.html, their shards out/<run>.shards/, the thumbnails once in out/media/), opens them from
# disk in Chromium with filters and a search pre-selected through the URL hash, and checks the DOM after
# the page's script ran: every row drawn from its shard, the filter shows exactly the rows it should,
# markup stayed text, every image is a stored thumbnail, stage blocks and verdicts drawn. Also takes
# a screenshot (path printed). Then both runs are logged through a real MLflow server on loopback as
# `socialbench track` logs them (the media once, in the parent run, packed) and a logged page is opened
# at the URL the server serves it at: rows from its logged shards, images from the parent run's packs
# by Range requests (and once more from Python's http.server, which ignores Range: whole packs).
# Exits non-zero on failure.
#
#   bash scripts/check_viewer.sh            # work folder: a fresh mktemp -d (printed)
#   VIEWER_CHECK_DIR=/tmp/v bash scripts/check_viewer.sh
#   VIEWER_CHECK_N=72 VIEWER_CHECK_SHARD_ROWS=16 bash scripts/check_viewer.sh   # more instances, several shards
# (the first six instances are hand-made; more are drawn alike). The page draws the first page of
# matching rows at once and the next as the reader scrolls: each load checks the rows drawn (the first
# page of the expected ones, in order) and the count (every expected one, over all instances).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=/dev/null
source scripts/env.sh
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"

fail() { echo "check_viewer: FAIL: $*" >&2; exit 1; }

if ! command -v chromium >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || fail "chromium is not installed and installing it needs root: sudo apt-get install chromium"
    echo "check_viewer: installing chromium (Debian package)"
    apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi

WORK=${VIEWER_CHECK_DIR:-$(mktemp -d /tmp/check_viewer.XXXXXX)}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
echo "check_viewer: work folder $WORK"

# ---- a small run -------------------------------------------------------------------------------
python - "$WORK" <<'EOF'
"""Six MoCA-format instances (two per scenario; one video-text with sampled frames; one whose text
is markup) with images drawn here, and a params file with the random baseline."""
import hashlib, json, os, sys
from pathlib import Path
from PIL import Image, ImageDraw
from socialbench.moca.schema.taxonomy import load_taxonomy

work = Path(sys.argv[1])
tax = load_taxonomy()
(work / "data" / "media").mkdir(parents=True, exist_ok=True)  # the data folder: media there may be read
colours = [(200, 80, 60), (60, 120, 200), (80, 160, 90), (180, 150, 40), (120, 80, 170), (90, 90, 90)]
texts = ["\"what a lovely way to treat people\"", "<b>not bold</b> <script>document.title='pwned'</script> & <img src=x>",
         "\"sure, take your time\" #mondays", "\"I will decide when we are done\"", "\"whatever, next topic\"",
         "\"a true genius at work\""]
recs = []
n = int(os.environ.get("VIEWER_CHECK_N") or 6)
for k in range(n):
    scenario = ["affection", "intent", "stance"][k % 3]
    iid = f"check-{k:02d}"
    img = Image.new("RGB", (320, 240), colours[k % 6] if k < 6 else ((37 * k) % 256, (91 * k) % 256, (53 * k) % 256))
    d = ImageDraw.Draw(img)
    d.ellipse((40, 40, 120, 120), fill=(240, 240, 240))
    d.rectangle((180, 60, 280, 200), fill=(30, 30, 30))
    d.text((10, 215), iid, fill=(255, 255, 255))
    text = texts[k] if k < 6 else texts[k % 6 if k % 6 != 1 else 0].replace("\"", f"\"case {k}: ", 1)
    rec = {"id": iid, "source": "check_viewer", "modality": "image_text", "text": text, "transcript": None,
           "media": [f"data/media/{iid}.png"], "scenario": scenario, "domain": "peer", "culture": "general context",
           "subject_options": ["the speaker", "the coach", "the fan", "the referee"],
           "target_options": ["the player", "the crowd", "the team", "the press"],
           "subject": "the speaker", "target": "the player",
           "mechanism": tax.mechanism_names(scenario)[0], "label": tax.label_names(scenario)[k % 2]}
    img.save(work / "data" / "media" / f"{iid}.png")
    if k % 6 == 5:  # video-text: its sampled frames, as socialbench moca frames records them
        rec.update(modality="video_text", media=[f"data/media/{iid}.mp4"], transcript="A: a true genius at work.\nB: Sorry?")
        rec["frames"] = []
        for j in range(4):
            f = Image.new("RGB", (160, 120), (60, 60 + 40 * j, 160))
            ImageDraw.Draw(f).ellipse((20 + 30 * j, 40, 60 + 30 * j, 80), fill=(250, 220, 0))
            p = work / "data" / "media" / f"{iid}-f{j}.png"
            f.save(p)
            rec["frames"].append({"path": f"data/media/{p.name}", "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                                  "index": 5 * j, "timestamp": 0.5 * j})
    recs.append(rec)
(work / "test.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
(work / "params.yaml").write_text(
    "seed: 7\ncache: {path: requests.sqlite}\nmoca: {methods: [direct], retrieval: {retriever: none}}\n"
    "models:\n  random: {backend: random, category: baseline}\n"
    "  codar-script: {backend: codar_script, category: pipeline check}\n")
EOF

cd "$WORK"
socialbench infer --benchmark moca --instances test.jsonl --model random --method direct --params params.yaml \
    --cache requests.sqlite --out direct.jsonl --stats direct.stats.json --trace direct.trace.jsonl --no-progress

# The multi-stage run: VIEWER_CHECK_MULTI=auto (CoDAR when this checkout has it and its run works,
# else the fixture, saying why), codar (CoDAR or fail), fixture.
MODE=${VIEWER_CHECK_MULTI:-auto}
MULTI=""
if [ "$MODE" != fixture ] && python -c "import socialbench.moca.methods.codar, socialbench.moca.eval.testing" 2>/dev/null; then
    if socialbench infer --benchmark moca --instances test.jsonl --model codar-script --method codar --params params.yaml \
        --cache requests.sqlite --out multi.jsonl --stats multi.stats.json --trace multi.trace.jsonl --no-progress \
        >multi.log 2>&1; then
        MULTI="CoDAR on the codar_script test double"
    elif [ "$MODE" = codar ]; then
        cat multi.log >&2
        fail "the CoDAR run failed (log above)"
    else
        echo "check_viewer: warning: the CoDAR run failed, so the multi-stage page uses the fixture: $(tail -n1 multi.log)" >&2
    fi
elif [ "$MODE" = codar ]; then
    fail "VIEWER_CHECK_MULTI=codar but this checkout has no CoDAR method or codar_script backend"
fi
if [ -z "$MULTI" ]; then
    MULTI="a hand-written multi-stage trace (fixture written by this script)"
    cp direct.jsonl multi.jsonl
    python - <<'EOF'
import json
recs = [json.loads(l) for l in open("direct.trace.jsonl")]
out = lambda **kw: kw
for r in recs[:2]:
    passes = [
        {"stage": "observer", "pass": 1, "output": out(caption="Two figures; the left one is light, the right one dark.")},
        {"stage": "conflict", "pass": 1, "output": out(The_Conflict="praise <em>versus</em> the scene")},
        {"stage": "checker", "pass": 1, "output": out(status="REJECTED", breakpoint=3, refine="the conflict is not grounded")},
        {"stage": "conflict", "pass": 2, "output": out(The_Conflict="praise against a visible failure")},
        {"stage": "checker", "pass": 2, "output": out(status="ACCEPTED", breakpoint=None, refine="")},
    ]
    if r["id"] == recs[1]["id"]:
        passes = passes[:3]
    r["trace"] = {"note": "fixture written by scripts/check_viewer.sh", "stages": passes,
                  "verdicts": [p["output"] for p in passes if p["stage"] == "checker"],
                  "not_accepted": r["id"] == recs[1]["id"], "revisions": 1}
for r in recs:  # CoDAR's run: the page draws the trace as CoDAR's hook says
    r["method"] = "codar"
preds = [dict(json.loads(l), method="codar") for l in open("direct.jsonl")]
open("multi.trace.jsonl", "w").write("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
open("multi.jsonl", "w").write("".join(json.dumps(r, sort_keys=True) + "\n" for r in preds))
EOF
fi
echo "check_viewer: multi-stage run: $MULTI"

SHARDS=()
[ -n "${VIEWER_CHECK_SHARD_ROWS:-}" ] && SHARDS=(--shard-rows "$VIEWER_CHECK_SHARD_ROWS")
for run in direct multi; do
    socialbench viewer --benchmark moca --instances test.jsonl --predictions $run.jsonl --traces $run.trace.jsonl \
        --out out/run/$run.html "${SHARDS[@]}"
done
socialbench viewer --benchmark moca --instances test.jsonl --predictions direct.jsonl --traces direct.trace.jsonl \
    --out again/run/direct.html "${SHARDS[@]}"
diff -r out/run/direct.shards again/run/direct.shards >/dev/null && cmp -s out/run/direct.html again/run/direct.html \
    && diff -r out/media again/media >/dev/null || fail "two builds of the same page differ"

# ---- in the browser ----------------------------------------------------------------------------
chrome() {  # chrome <mode args...> <url>; one profile per call, dbus noise to a log
    chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
        --user-data-dir="$WORK/chrome-profile" --virtual-time-budget=10000 "$@" 2>>"$WORK/chromium.log"
}
dom() {  # dom <page> <hash> <name> -> dom.<name>.html
    chrome --window-size=1280,900 --dump-dom "file://$WORK/out/run/$1#$2" >"$WORK/dom.$3.html" \
        || fail "chromium could not load $1#$2 (see $WORK/chromium.log)"
}
dom direct.html "" all
dom direct.html "correct=wrong" wrong
dom direct.html "correct=correct" right
dom direct.html "group=intent&error=no" intent
dom direct.html "group=nonsense" unknown
dom multi.html "" multi
dom multi.html "verdict=revised&expand=1" revised
dom multi.html "error=yes" multierr
dom direct.html "q=GENIUS" search

python - "$WORK" "$MULTI" <<'EOF'
"""The DOM after the page's script ran, checked with the instances and predictions as the truth."""
import json, sys
from html.parser import HTMLParser
from pathlib import Path

work = Path(sys.argv[1])
fixture = "fixture" in sys.argv[2]
insts = [json.loads(l) for l in open(work / "test.jsonl")]
preds = {p["id"]: p for p in map(json.loads, open(work / "direct.jsonl"))}
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.ids, self.text, self.body, self.tags, self.stack = [], {}, {}, {}, [], []
        self.alltext = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a, [c for c, _ in self.stack]))
        if tag == "article":
            self.rows.append(a)
        if tag == "body":
            self.body = a
        if "id" in a:
            self.ids[a["id"]] = a
            self.stack.append((a["id"], tag))
        else:
            self.stack.append((None, tag))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[1] == tag:
                break

    def handle_data(self, data):
        self.alltext += data
        for i, _ in self.stack:
            if i:
                self.text[i] = self.text.get(i, "") + data


def load(name):
    d = Dom()
    d.feed((work / f"dom.{name}.html").read_text())
    return d


page = json.loads((work / "out/run/direct.html").read_text().split('id="sb-index">')[1].split("</script>")[0])
P = page["page"]


def visible(d):  # the rows drawn, checked to be the first page of what matches
    return [r["data-id"] for r in d.rows if "hidden" not in r]


def first(ids):
    return list(ids)[:P]


check(len(page["starts"]) == len(list((work / "out/run/direct.shards").glob("*.js"))), "the index and the shards differ")
wrong = {i["id"] for i in insts if not all(
    (preds[i["id"]].get(k) or "").lower() == i[k].lower() for k in ("subject", "target", "mechanism", "label"))}
d = load("all")
check(d.body.get("data-ready") == "1", "the page's script did not draw its first rows")
check(visible(d) == first(i["id"] for i in insts), f"without a filter the first {P} instances should be drawn in order")
check(d.text.get("shown", "").strip() == str(len(insts)), "the count does not say every row shows")
scripts = [a for t, a, _ in d.tags if t == "script"]
check(len([a for a in scripts if "src" not in a]) == 2, "markup in the text became a script element")
need = sorted({f"direct.shards/{k:0{page['width']}d}.js" for k in {r[6] for r in page["rows"][:P]}})
check(sorted(a["src"] for a in scripts if "src" in a) == need, "the first rows did not come from their shards alone")
check(not any(t == "b" for t, _, _ in d.tags), "markup in the text became a <b> element (the page itself has none)")
check("<b>not bold</b> <script>" in d.alltext, "the markup text is not shown as it is")
drawn = [i for i in insts if i["id"] in set(visible(d))]
n_video = sum(1 for i in drawn if i["modality"] == "video_text")
check(sum(1 for t, a, _ in d.tags if t == "img") == len(drawn) + 3 * n_video, "images: one per image instance and four frames")
srcs = {a.get("src", "") for t, a, _ in d.tags if t == "img"}
check(all(s.startswith("../media/") and s.endswith(".jpg") and (work / "out" / s[3:]).is_file() for s in srcs),
      f"an image is not a stored thumbnail in out/media: {sorted(srcs)}")
links = [v for _, a, _ in d.tags for k, v in a.items() if k in ("src", "href")]
check(all(v.startswith(("../media/", "direct.shards/", "#")) for v in links), "the page links something outside its viewer folder")
check("pwned" not in (work / "dom.all.html").read_text().split("<title>")[1].split("</title>")[0], "the markup ran")
d = load("wrong")
check(visible(d) == first(i["id"] for i in insts if i["id"] in wrong), f"#correct=wrong shows {visible(d)}, expected {sorted(wrong)}")
check("f-correct" in d.ids and "f-group" in d.ids and "f-error" in d.ids, "a filter is missing")
check(d.text.get("shown", "").strip() == str(len(wrong)), "the count does not match the rows shown")
d = load("right")
right = [i["id"] for i in insts if i["id"] not in wrong]
check(visible(d) == first(right), f"#correct=correct shows {visible(d)}, expected {right}")
check(("hidden" in d.ids.get("empty", {})) == bool(right), "the no-match message is not shown exactly when no row matches")
d = load("intent")
expect = [i["id"] for i in insts if i["scenario"] == "intent" and not preds[i["id"]].get("error")]
check(visible(d) == first(expect) and d.text.get("shown", "").strip() == str(len(expect)), f"#group=intent&error=no shows {visible(d)}, expected {expect}")
d = load("unknown")
check(visible(d) == first(i["id"] for i in insts) and "group=nonsense" in d.text.get("notice", ""),
      "an unknown filter value should be ignored and named")
# the multi-stage page, against its own trace and prediction files
traces = {r["id"]: r.get("trace") or {} for r in map(json.loads, open(work / "multi.trace.jsonl"))}
errors = [p["id"] for p in map(json.loads, open(work / "multi.jsonl")) if p.get("error")]


def statuses(v):
    if isinstance(v, dict):
        return ([v["status"]] if v.get("status") in ("ACCEPTED", "REJECTED") else []) + [s for x in v.values() for s in statuses(x)]
    return [s for x in v for s in statuses(x)] if isinstance(v, list) else []


found = {i: statuses(t) for i, t in traces.items()}
d = load("multi")
check(all(r.get("data-verdict", "") == "" or found[r["data-id"]] for r in d.rows), "a verdict shown that the trace does not have")
stages = sum(1 for t, a, _ in d.tags if t == "details" and "stage" in a.get("class", "").split())
expect_stages = sum(len(traces[i].get("stages") or []) for i in visible(d))
check(stages == expect_stages and stages > 0, f"{stages} stage blocks drawn, the traces have {expect_stages}")
html_text = (work / "dom.multi.html").read_text()
check(not any(found.values()) or ("ACCEPTED" in html_text or "REJECTED" in html_text), "no checker verdict drawn")
revised = [i["id"] for i in insts if "REJECTED" in found[i["id"]]]
d = load("revised")
if any(found.values()):
    check(visible(d) == first(revised) and d.text.get("shown", "").strip() == str(len(revised)), f"#verdict=revised shows {visible(d)}, expected {revised}")
else:  # a run without verdicts has no checker filter: the hash's value is ignored and named
    check(visible(d) == first(i["id"] for i in insts) and "verdict" in d.text.get("notice", ""), "an unusable verdict filter was not named")
traces_open = [a for t, a, _ in d.tags if t == "details" and "trace" in a.get("class", "").split()]
check(traces_open and all("open" in a for a in traces_open), "expand=1 did not open the traces")
d = load("multierr")
check(visible(d) == first(errors), f"#error=yes shows {visible(d)}, expected {errors}")
d = load("search")
expect = [i["id"] for i in insts if "genius" in (i["text"] + (i.get("transcript") or "")).lower()]
check(expect and visible(d) == first(expect) and d.text.get("shown", "").strip() == str(len(expect)),
      f"#q=GENIUS shows {visible(d)}, expected {expect}")
from socialbench.results.viewer_page import read_shard_js
import re
refs = [m for run in ("direct", "multi") for f in sorted((work / "out/run" / f"{run}.shards").glob("*.js"))
        for h in read_shard_js(f.read_text())[1] for m in re.findall(r'src="\.\./media/([^"]+)"', h)]
stored = sorted(p.name for p in (work / "out" / "media").iterdir())
multi_srcs = {a.get("src", "") for t, a, _ in load("multi").tags if t == "img"}
check(set(refs) == set(stored) and len(refs) >= 2 * len(stored) and multi_srcs <= {f"../media/{n}" for n in stored},
      f"the runs' thumbnails are not stored once ({len(stored)} files, {len(refs)} references in two runs)")
if fixture:
    check(revised == [insts[0]["id"], insts[1]["id"]], f"the fixture's revised rows are {revised}")
    check("&lt;em&gt;" in html_text, "markup in a stage output was not kept as text")
print(f"check_viewer: multi-stage page: {stages} stage blocks, {sum(map(len, found.values()))} verdicts,"
      f" {len(revised)} revised, {len(errors)} with an error")
if problems:
    print("check_viewer: FAIL:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"check_viewer: DOM checks passed ({len(insts)} rows; filters by hash: correct, group+error, verdict, search;"
      f" unknown value named; {len(stored)} thumbnails stored once for both runs)")
EOF

chrome --screenshot="$WORK/direct.png" --window-size=1280,1400 "file://$WORK/out/run/direct.html#correct=wrong" >/dev/null
chrome --screenshot="$WORK/multi.png" --window-size=1280,1400 "file://$WORK/out/run/multi.html#verdict=revised&expand=1" >/dev/null
python - "$WORK" <<'EOF'
import sys
from pathlib import Path
from PIL import Image
for name in ("direct.png", "multi.png"):
    p = Path(sys.argv[1]) / name
    if not p.is_file():
        sys.exit(f"check_viewer: FAIL: no screenshot {p}")
    colours = Image.open(p).convert("RGB").getcolors(1 << 20) or []
    if len(colours) < 50:
        sys.exit(f"check_viewer: FAIL: screenshot {p} is nearly blank ({len(colours)} colours)")
    print(f"check_viewer: screenshot {p}")
EOF

# ---- from MLflow's artifact store, served by a real MLflow server ----------------------------------
# Both runs logged through an MLflow server on loopback as `socialbench track` logs them
# (results.tracking.log_evaluations): the media once in the parent run, packed (a pack size that
# makes several packs of this run's thumbnails), each run's page and shards in its own run. The page
# is opened at the URL the server serves it at (its artifact proxy, /api/2.0/mlflow-artifacts/...):
# it must draw its rows from its logged shards and every image from the parent's packs, by Range
# requests the server answers with 206. MLflow serves every artifact as a download
# (Content-Disposition: attachment), which a browser saves instead of showing, so Chromium reaches
# the server through a loopback proxy (a test double) that drops that one header and passes
# everything else as it is. Then the same store is served by Python's http.server, which ignores
# Range: the page must fall back to fetching each pack once, whole. From disk (file://) the page may
# not fetch: it must still draw its rows and say that its images need HTTP.
free_port() { python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PIDS=()
stop_servers() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_servers EXIT
wait_http() {  # wait_http <url> <log>
    for _ in $(seq 120); do curl -fs -o /dev/null "$1" && return 0; sleep 1; done
    fail "no answer from $1 after 120 s (see $2)"
}
MLPORT=$(free_port)
mlflow server --backend-store-uri "sqlite:///$WORK/served.db" --artifacts-destination "$WORK/served" \
    --host 127.0.0.1 --port "$MLPORT" --workers 1 >"$WORK/mlflow-server.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$MLPORT/health" "$WORK/mlflow-server.log"
python - "$WORK" "http://127.0.0.1:$MLPORT" <<'EOF'
import sys
from pathlib import Path
from mlflow.tracking import MlflowClient
from socialbench.results.tracking import log_evaluations
from socialbench.results.viewer_page import page_media
from socialbench.stages.track import relinker

work, server = Path(sys.argv[1]), sys.argv[2]
evs, media_bytes = [], 0
for run in ("direct", "multi"):
    page = work / "out/run" / f"{run}.html"
    href, media = page_media(page)
    evs.append({"benchmark": "moca", "model": "random", "method": run, "params": {"seed": 7},
                "content": {"predictions_sha256": run}, "provenance": {"git_commit": "check"},
                "scores": {"all": {"n": 6}}, "stats": {},
                "artifacts": [(work / "out/run" / f"{run}.shards", f"viewer/{run}.shards")],
                "viewer": {"page": page, "folder": "viewer", "media": media, "relink": relinker(page, href)}})
media_bytes = sum(p.stat().st_size for p in (work / "out" / "media").iterdir())
out = log_evaluations(evs, server, "check", work / "unused", media_pack_bytes=max(1, media_bytes // 4))
client = MlflowClient(server)
where = [client.get_run(r).info.artifact_uri.removeprefix("mlflow-artifacts:").strip("/") for r in (out["parent"], out["new"][0])]
(work / "mlflow-runs.txt").write_text(" ".join(where) + "\n")
EOF
read -r PARENT CHILD < "$WORK/mlflow-runs.txt"
PAGE_PATH="$CHILD/moca/random/direct/viewer/direct.html"
[ -f "$WORK/served/$PAGE_PATH" ] || fail "the logged page is not at $WORK/served/$PAGE_PATH"
cat >"$WORK/proxy.py" <<'EOF'
"""A loopback HTTP proxy (test double): forwards each request as it is and each answer as it is,
less MLflow's Content-Disposition: attachment, so that the browser shows the page it asked for.
Logs "<status> <path> <range>" per request."""
import http.client, sys, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
log = open(sys.argv[2], "a", buffering=1)

class Proxy(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.hostname != "127.0.0.1":  # the browser's own requests elsewhere: not passed on
            self.send_error(502)
            return
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        path = url.path + (f"?{url.query}" if url.query else "")
        conn.request("GET", path, headers={k: v for k, v in self.headers.items() if k.lower() not in HOP})
        r = conn.getresponse()
        body = r.read()
        log.write(f"{r.status} {url.path} {self.headers.get('Range') or '-'}\n")
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in HOP | {"content-disposition", "content-length"}:
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Proxy).serve_forever()
EOF
PXPORT=$(free_port)
python "$WORK/proxy.py" "$PXPORT" "$WORK/proxy.log" 2>"$WORK/proxy.err" &
PIDS+=($!)
for _ in $(seq 30); do grep -q . "$WORK/proxy.err" 2>/dev/null && fail "the proxy did not start ($WORK/proxy.err)";
    curl -s -o /dev/null --proxy "http://127.0.0.1:$PXPORT" "http://127.0.0.1:$MLPORT/health" && break; sleep 0.5; done
URL="http://127.0.0.1:$MLPORT/api/2.0/mlflow-artifacts/artifacts/$PAGE_PATH"
PROXY=(--proxy-server="http://127.0.0.1:$PXPORT" --proxy-bypass-list="<-loopback>")
chrome "${PROXY[@]}" --window-size=1280,900 --dump-dom "$URL#correct=wrong" >"$WORK/dom.mlflow.html" \
    || fail "chromium could not load $URL (see $WORK/chromium.log)"
chrome "${PROXY[@]}" --screenshot="$WORK/mlflow.png" --window-size=1280,1400 "$URL" >/dev/null
HSPORT=$(free_port)
python -m http.server --bind 127.0.0.1 --directory "$WORK/served" "$HSPORT" >"$WORK/http-server.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$HSPORT/" "$WORK/http-server.log"
chrome --window-size=1280,900 --dump-dom "http://127.0.0.1:$HSPORT/$PAGE_PATH#correct=wrong" >"$WORK/dom.static.html" \
    || fail "chromium could not load the page from http.server (see $WORK/chromium.log)"
chrome --window-size=1280,900 --dump-dom "file://$WORK/served/$PAGE_PATH#correct=wrong" >"$WORK/dom.disk.html" \
    || fail "chromium could not load the logged page from disk (see $WORK/chromium.log)"
python - "$WORK" "$PARENT" "$MLPORT" "$HSPORT" <<'EOF'
import json, re, sys
from pathlib import Path
from PIL import Image
work, parent, mlport, hsport = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
packs = work / "served" / parent / "media"
index = json.loads((packs / "index.json").read_text())
page_index = json.loads((work / "out/run/direct.html").read_text().split('id="sb-index">')[1].split("</script>")[0])
wrong = [r[0] for r in page_index["rows"] if r[2] == "wrong"][: page_index["page"]]
problems = []
stored = sorted(p.name for p in (work / "out" / "media").iterdir())
if sorted(index["media"]) != stored or len(index["packs"]) < 2:
    problems.append(f"the parent's packs hold {len(index['media'])} media in {len(index['packs'])} packs, expected {len(stored)} in several")
if sorted(p.name for p in packs.iterdir()) != sorted(["index.json", *index["packs"]]):
    problems.append(f"the parent's media/ holds other files than its packs and index: {sorted(p.name for p in packs.iterdir())}")
for name, origin in (("mlflow", f"http://127.0.0.1:{mlport}"), ("static", f"http://127.0.0.1:{hsport}")):
    dom = (work / f"dom.{name}.html").read_text()
    drawn = re.findall(r'<article[^>]*data-id="([^"]+)"', dom)
    imgs = re.findall(r"<img\b[^>]*>", dom)
    body = re.search(r"<body([^>]*)>", dom).group(1)
    shown = re.search(r'data-media-shown="(\d+)"', body)
    notice = re.search(r'<span id="notice">([^<]*)</span>', dom)
    if 'data-ready="1"' not in body or drawn != wrong:
        problems.append(f"{name}: the page drew {drawn}, expected the wrong rows {wrong} from its logged shards")
    if not imgs:
        problems.append(f"{name}: the page drew no image")
    bad = [t for t in imgs if not re.search(f'src="blob:{re.escape(origin)}/', t) or "data-sb-pack" in t]
    if bad:
        problems.append(f"{name}: images not read from the packs (no blob: URL): {bad[:2]}")
    if shown is None or int(shown.group(1)) != len(imgs) or "data-media-failed" in body:
        problems.append(f"{name}: {shown and shown.group(1)} of {len(imgs)} images shown; body {body[:200]}")
    if notice and notice.group(1).strip():
        problems.append(f"{name}: the page says: {notice.group(1).strip()}")
# From disk (file://) a page may not fetch: its rows draw (shards are scripts there), its images do not, and it says why.
dom = (work / "dom.disk.html").read_text()
if re.findall(r'<article[^>]*data-id="([^"]+)"', dom) != wrong or "over HTTP only" not in dom:
    problems.append("from disk: the logged page did not draw its rows, or did not say that its images need HTTP")
log = [line.split() for line in (work / "proxy.log").read_text().splitlines()]
ranged = [l for l in log if l[1].endswith(".pack") and l[2].startswith("bytes=")]
if not ranged or any(l[0] != "206" for l in ranged) or any(l[1].endswith(".pack") and l[2] == "-" for l in log):
    problems.append(f"the packs were not read by Range requests answered 206 by MLflow: {[l for l in log if l[1].endswith('.pack')][:3]}")
if any(re.search(r"/media/[0-9a-f]{64}\.jpg$", l[1]) for l in log):
    problems.append("the page asked for an image file, not a pack")
static = (work / "http-server.log").read_text()
whole = re.findall(r'"GET (/\S+\.pack) HTTP', static)
if not whole or len(whole) != len(set(whole)):
    problems.append(f"from http.server (no Range), each pack must be fetched once, whole: {whole}")
others = [p for p in (work / "served").rglob("*") if p.is_file() and p.suffix in (".jpg", ".pack") and parent not in str(p)]
if others:
    problems.append(f"a run other than the parent holds media: {others[:2]}")
colours = Image.open(work / "mlflow.png").convert("RGB").getcolors(1 << 20) or []
if len(colours) < 50:
    problems.append(f"screenshot {work / 'mlflow.png'} is nearly blank ({len(colours)} colours)")
if problems:
    sys.exit("check_viewer: FAIL: from MLflow's artifact store:\n  " + "\n  ".join(problems))
n_img = len(re.findall(r"<img\b", (work / "dom.mlflow.html").read_text()))
print(f"check_viewer: from the MLflow server: {len(wrong)} rows drawn from the logged shards, {n_img} images from"
      f" the parent run's {len(index['packs'])} packs ({len(ranged)} Range requests, each answered 206);"
      f" from http.server (no Range): each of {len(whole)} packs fetched once; screenshot {work / 'mlflow.png'}")
EOF
echo "check_viewer: OK"
