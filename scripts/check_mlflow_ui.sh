#!/usr/bin/env bash
# Checks the MLflow UI in headless Chromium on a store built here from the demo's predictions:
# the runs page (as `socialbench ui` prints it) lists every evaluation run flat, the chart view
# (one click) shows their headline metrics, and the compare view of the evaluation runs works.
# Needs `bash scripts/demo.sh` run first (it scores results/predictions/moca afresh). Screenshots
# are left in $OUT (default: a temporary folder, printed) to look at.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
source scripts/env.sh
if ! command -v chromium >/dev/null; then
    apt-get -o DPkg::Lock::Timeout=600 install -y chromium >/dev/null || { apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y chromium >/dev/null; }
fi
WORK=$(mktemp -d /tmp/check_mlflow_ui.XXXXXX)
OUT=${OUT:-$WORK/shots}
mkdir -p "$OUT"
fail() { echo "check_mlflow_ui: FAIL: $*" >&2; exit 1; }
preds=(results/predictions/moca/*/*.jsonl)
[ -e "${preds[0]}" ] || fail "no predictions in results/predictions/moca (run bash scripts/demo.sh first)"

# A store of its own: params.yaml with the tracking URI pointing into $WORK; scores made afresh.
sed "s#^\(  tracking_uri:\).*#\1 sqlite:///$WORK/mlflow.db#" params.yaml > "$WORK/params.yaml"
scores=()
for pred in "${preds[@]}"; do
    model=$(basename "$(dirname "$pred")"); method=$(basename "$pred" .jsonl)
    socialbench score --benchmark moca --instances data/processed/moca/test.jsonl --predictions "$pred" \
        --out "$WORK/scores/moca/$model/$method.json" >/dev/null
    scores+=("$WORK/scores/moca/$model/$method.json")
done
track() {
    (cd "$WORK" && socialbench track --benchmark moca --params "$WORK/params.yaml" \
        --instances "$ROOT/data/processed/moca/test.jsonl" --predictions-dir "$ROOT/results/predictions/moca" \
        --stats-dir "$ROOT/results/runs/moca" --tables-dir "$ROOT/results/tables/moca" --out "$WORK/track.json" "${scores[@]}")
}
track | grep -q "track: ${#scores[@]} new run(s)" || fail "first track did not log ${#scores[@]} runs"
track | grep -q "track: 0 new run(s)" || fail "an unchanged rerun of track logged new runs"

PORT=$(python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE=http://127.0.0.1:$PORT
mlflow server --backend-store-uri "sqlite:///$WORK/mlflow.db" --host 127.0.0.1 --port "$PORT" --workers 1 \
    >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 90); do curl -sf "$BASE/health" >/dev/null && break; sleep 1; done
curl -sf "$BASE/health" >/dev/null || fail "mlflow server did not start (see $WORK/server.log)"

# The page socialbench ui lands on, and what the check expects on it.
read -r RUNS_URL EXP_ID NAMES RUN_IDS N_METRICS < <(python - "$WORK/params.yaml" "$BASE" <<'PY'
import json, sys
from mlflow.tracking import MlflowClient
from socialbench.core.config import load_params
from socialbench.results.tracking import EXPERIMENT_KIND, EXPERIMENT_KIND_TAG, runs_page_url
p = load_params(sys.argv[1])
uri, name = p["mlflow"]["tracking_uri"], p["mlflow"]["experiment"]
client = MlflowClient(uri)
exp = client.get_experiment_by_name(name)
assert exp.tags.get(EXPERIMENT_KIND_TAG) == EXPERIMENT_KIND, exp.tags
runs = client.search_runs([exp.experiment_id], filter_string="tags.`socialbench.kind` = 'evaluation'")
metric_sets = {tuple(sorted(r.data.metrics)) for r in runs}
assert len(metric_sets) == 1, "evaluation runs log different metric names"
print(runs_page_url(uri, name, sys.argv[2]), exp.experiment_id, ",".join(r.info.run_name for r in runs),
      json.dumps([r.info.run_id for r in runs], separators=(",", ":")), len(metric_sets.pop()))
PY
)
page() {  # page URL, name: the DOM after the page settled, and a screenshot
    timeout 120 chromium --headless --no-sandbox --disable-gpu --window-size=1600,1000 --virtual-time-budget=30000 \
        --screenshot="$OUT/$2.png" "$1" >/dev/null 2>&1
    timeout 120 chromium --headless --no-sandbox --disable-gpu --window-size=1600,1000 --virtual-time-budget=30000 \
        --dump-dom "$1" 2>/dev/null > "$WORK/$2.html"
}
expect() {  # file, text, what
    grep -qF -- "$2" "$1" || fail "$3: '$2' not on the page (screenshots in $OUT)"
}
page "$RUNS_URL" runs
expect "$WORK/runs.html" "Training runs" "the runs table is not where the UI lands"
for n in ${NAMES//,/ }; do expect "$WORK/runs.html" "$n" "runs page lists the evaluation runs"; done
# One click: the chart view of the same runs (its toggle beside the table's) shows every metric.
page "$RUNS_URL&compareRunsMode=CHART" chart
# (Chart titles and bars are drawn after the DOM is dumped: the section's count is checked here,
# the charts themselves in the screenshot.)
expect "$WORK/chart.html" "Model metrics" "chart view shows the metrics"
expect "$WORK/chart.html" ">($N_METRICS)<" "chart view has a chart per metric ($N_METRICS)"
for n in ${NAMES//,/ }; do expect "$WORK/chart.html" "$n" "chart view names the runs"; done
ENC=$(python -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$RUN_IDS")
page "$BASE/#/compare-runs?runs=$ENC&experiments=%5B%22$EXP_ID%22%5D" compare
expect "$WORK/compare.html" "Comparing" "compare view"
for n in ${NAMES//,/ }; do expect "$WORK/compare.html" "$n" "compare view names the runs"; done
expect "$WORK/compare.html" "affection.label" "compare view lists the metrics"
echo "check_mlflow_ui: OK (${NAMES//,/, } on $RUNS_URL; screenshots in $OUT)"
