#!/usr/bin/env bash
# Build the Snakemake report of the last run and check it in headless Chromium: the page renders (its
# JavaScript app runs) and shows the result categories of every benchmark and the reports.
#   bash scripts/check_report.sh [REPORT.html] [SCREENSHOT.png]
# Needs a finished pipeline run (`snakemake --cores N`). Installs Debian's chromium when absent (root).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
report=${1:-results/report.html}
shot=${2:-results/report.png}

if ! command -v chromium >/dev/null; then
    apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium >/dev/null
fi

snakemake --report "$report" --quiet all >/dev/null
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=15000)
dom=$(mktemp)
trap 'rm -f "$dom"' EXIT
chromium "${flags[@]}" --dump-dom "file://$PWD/$report" >"$dom" 2>/dev/null
chromium "${flags[@]}" --window-size=1400,1000 --screenshot="$PWD/$shot" "file://$PWD/$report" >/dev/null 2>&1

# The categories the rules flag with report(): one per benchmark in params, and the reports.
expected=(reports $(python -c "
from socialbench.core.benchmarks import available_benchmarks
from socialbench.core.config import load_params
p = load_params('params.yaml')
print(' '.join(b for b in available_benchmarks() if b in p))"))
missing=()
for category in "${expected[@]}"; do
    grep -qi ">[[:space:]]*$category[[:space:]]*<" "$dom" || missing+=("$category")
done
if ((${#missing[@]})); then
    echo "check_report: $report: categories not rendered: ${missing[*]} (screenshot: $shot)" >&2
    exit 1
fi
echo "check_report: $report renders the categories ${expected[*]}; screenshot: $shot"
