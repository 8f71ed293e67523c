#!/usr/bin/env bash
# The main job: set up, run the whole pipeline on the embedded demo data, then print the headline tables.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
snakemake --cores "${CORES:-all}" "$@"

# The headline tables: MoCA's overall table (macro over the scenarios, from all.md; the first table
# when an older all.md has none) and each MeetingToM task table, their rows without the notes.
headline() {  # file, heading pattern: that section's title and table lines
    awk -v pat="$2" '
        $0 ~ "^#+ " && on { exit }
        $0 ~ pat { on = 1; print; next }
        on && /^\|/ { print }' "$1"
}
echo
if [ -f results/tables/moca/all.md ]; then
    if grep -q "^### Overall" results/tables/moca/all.md; then
        headline results/tables/moca/all.md "^### Overall"
    else
        headline results/tables/moca/all.md "^### "
    fi
    echo
fi
for t in results/tables/meetingtom/*.md; do
    case "$t" in *.ci.md) continue ;; esac
    if [ -f "$t" ]; then headline "$t" "^# "; echo; fi
done
echo "Tables:  results/tables/moca/ (all.md has every scenario and the overall), results/tables/meetingtom/"
echo "Runs:    source .venv/bin/activate && socialbench ui   (MLflow UI on mlflow.db, opens on the runs table)"
