#!/usr/bin/env bash
# The main job: set up, run the whole pipeline on the embedded demo data, then print the headline tables.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
snakemake --cores "${CORES:-all}" "$@"

# The headline tables: MoCA's overall table (macro over the scenarios, from all.md; the first table
# when an older all.md has none) and MeetingToM's Table 1, their rows without the notes.
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
# MeetingToM's Table 1 (overall), one section per source: its headings and table rows.
if [ -f results/tables/meetingtom/table1_overall.md ]; then
    grep -E '^(#|\|)' results/tables/meetingtom/table1_overall.md
    echo
fi
echo "Tables:  results/tables/moca/ (all.md has every scenario and the overall), results/tables/meetingtom/"
echo "Runs:    source .venv/bin/activate && socialbench ui   (MLflow UI on mlflow.db, opens on the runs table)"
