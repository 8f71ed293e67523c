#!/usr/bin/env bash
# Share a finished run through a DVC remote (docs/scale-out.md, "DVC remote").
#
#   scripts/dvc_remote.sh push [dvc push options, e.g. -r cluster]
#       records.dvc <- the outputs no DVC stage declares (scripts/dvc_records.py), hashed into the
#       cache without touching the files, then `dvc push`. Commit dvc.lock and records.dvc after it.
#   scripts/dvc_remote.sh pull [dvc pull options]
#       `dvc pull`, then `snakemake --touch --forceall`: DVC writes the files in no particular order,
#       so their mtimes would make Snakemake rerun jobs; touching every output in the DAG's order
#       (nothing runs) leaves `snakemake -n` with nothing to do, and records Snakemake's metadata for
#       every job, so a later params edit reruns its jobs. Only right after a pull: a touch would also
#       hide a real change. `dvc status` is content-based and needs no touch.
set -euo pipefail
cd "$(dirname "$0")/.."
# DVC and records.dvc need the repository's git checkout: say so in one line rather than in DVC's words
git rev-parse --is-inside-work-tree >/dev/null 2>&1 \
  || { echo "error: $(pwd): not a git checkout; $0 shares a run of the repository (nothing was done)" >&2; exit 2; }

cmd=${1:-}
shift || true
case $cmd in
  push)
    python scripts/dvc_records.py --out records.dvc >/dev/null
    dvc commit --force --no-relink --quiet records.dvc
    dvc push "$@"
    ;;
  pull)
    dvc pull "$@"
    # Twice: with Snakemake 9.27 the first pass leaves the jobs of the download/release rules without
    # metadata (`snakemake -n` warns "missing provenance/metadata", and their params could not trigger
    # a rerun); the second pass records it. Each pass takes seconds and runs nothing.
    for _ in 1 2; do
      log=$(snakemake --touch --forceall --cores 1 --quiet rules 2>&1) || { echo "$log" >&2; exit 1; }
    done
    ;;
  *)
    echo "usage: $0 push|pull [dvc options]" >&2
    exit 2
    ;;
esac
