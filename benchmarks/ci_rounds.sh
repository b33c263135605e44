#!/usr/bin/env bash
# Rounds of the whole CI run beside two busy loops, one round at a time (how the CI table of RESULTS.md is measured).
#
#   benchmarks/ci_rounds.sh COMMIT LAST [FIRST] [OUTDIR]
#
# For each round FIRST..LAST (FIRST defaults to 1): clones this repository into a fresh folder, checks out COMMIT,
# starts two `python3 -c 'while True: pass'` loops, runs `.ci/run` (as root, as CI does), stops the loops, appends one
# line to OUTDIR/series_COMMIT.summary (start, end, exit code, seconds, the load average at the end and pytest's last
# summary line) and removes the clone. The round's whole output is kept in OUTDIR/round_COMMIT_N.log. A file named
# STOP in OUTDIR stops the series before its next round; the first failing round stops it too.
set -uo pipefail
usage="usage: ci_rounds.sh COMMIT LAST [FIRST] [OUTDIR]"
commit=${1:?$usage}
last=${2:?$usage}
first=${3:-1}
outdir=${4:-/tmp/ci-rounds}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$outdir"
loops=()
trap 'kill "${loops[@]}" 2>/dev/null' EXIT  # the busy loops never outlive the series, Ctrl-C included
for i in $(seq "$first" "$last"); do
  if [ -e "$outdir/STOP" ]; then echo "STOP found: the series ends before round $i"; exit 0; fi
  clone=$(mktemp -d "/tmp/ci-round-$i.XXXXXX")
  if ! { git clone -q "$repo" "$clone" && git -C "$clone" checkout -q "$commit"; }; then
    rm -rf "$clone"; echo "cannot check out $commit in a clone of $repo"; exit 2
  fi
  python3 -c 'while True: pass' & loops=($!)
  python3 -c 'while True: pass' & loops+=($!)
  start=$(date -u +%H:%M); t0=$(date +%s)
  (cd "$clone" && .ci/run) > "$outdir/round_${commit}_$i.log" 2>&1; rc=$?
  t1=$(date +%s); end=$(date -u +%H:%M); load=$(cut -d' ' -f1 /proc/loadavg)
  kill "${loops[@]}" 2>/dev/null; wait "${loops[@]}" 2>/dev/null; loops=()
  summary=$(grep -aE '(passed|failed|error).* in [0-9.]+s' "$outdir/round_${commit}_$i.log" | tail -1)
  echo "round $i start $start end $end rc=$rc wall=$((t1 - t0)) load=$load :: $summary" >> "$outdir/series_${commit}.summary"
  rm -rf "$clone"
  if [ "$rc" -ne 0 ]; then echo "round $i failed (exit $rc): $outdir/round_${commit}_$i.log"; exit 1; fi
done
