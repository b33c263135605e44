#!/bin/bash
# Grade a class on a Slurm cluster: the shards as one job array, then one job that merges them and writes
# the class report once every shard has succeeded. Extra arguments go to the array, e.g. --array=1-8.
#   COURSE=/shared/forge-workbook SUBMISSIONS=/shared/submissions GRADING=/shared/grading \
#     instructor/slurm/submit.sh --array=1-8
set -euo pipefail
: "${COURSE:?}" "${SUBMISSIONS:?}" "${GRADING:?}"
export COURSE SUBMISSIONS GRADING
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$GRADING"

array=$(sbatch --parsable --export=ALL --output="$GRADING/slurm-%A_%a.out" "$@" "$here/grade-array.sbatch")
merge=$(sbatch --parsable --export=ALL --dependency="afterok:${array%%;*}" --job-name=forgelab-merge \
  --output="$GRADING/slurm-merge-%j.out" --chdir="$COURSE" \
  --wrap='.venv/bin/forgelab gradebook merge "$GRADING"/shard-* --into "$GRADING/all" &&
          .venv/bin/forgelab grade report "$GRADING/all" --html')
echo "grading: job array $array; merge and class report: job $merge (runs when every shard has succeeded)"
echo "then: $GRADING/all (gradebook, feedback/ pages) and $GRADING/all/report/report.html"
