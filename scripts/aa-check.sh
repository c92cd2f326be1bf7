#!/usr/bin/env bash
# A/A check: evaluates a candidate identical to the original N times (default 10) on an
# example and prints each interval. None may be significant; each should contain 1.0.
# Usage: scripts/aa-check.sh [N] [REPO] [FUNCTION]
# AA_KEEP=DIR keeps each run's result.json there (for `build/stats_coverage --recorded`).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
repo=${2:-examples/cpu-histogram}
fn=${3:-histogram}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The original definition, exactly as it stands, taken from the file that defines it.
scripts/original-definition.py "$repo" "$fn" "$work/same.cpp"
printf '%-4s %-10s %-28s %-10s %s\n' run verdict "speedup [95% CI]" "contains1" noise_floor
sig=0; miss=0
for i in $(seq "$n"); do
  build/maxcode eval "$repo" --function "$fn" --candidate "$work/same.cpp" --out "$work/out$i" -q 2>/dev/null || true
  read -r verdict med lo hi floor < <(jq -r '.candidates[0] | [.verdict, .speedup.median, .speedup.low, .speedup.high, .timing.noise_floor] | @tsv' "$work/out$i/result.json")
  [ -n "${AA_KEEP:-}" ] && mkdir -p "$AA_KEEP" && cp "$work/out$i/result.json" "$AA_KEEP/aa-$i.json"
  contains=$(awk -v l="$lo" -v h="$hi" 'BEGIN{print (l<=1 && 1<=h) ? "yes" : "no"}')
  [ "$verdict" = faster ] && sig=$((sig+1))
  [ "$contains" = no ] && miss=$((miss+1))
  printf '%-4s %-10s %.3fx [%.3f, %.3f]      %-10s %.3f\n' "$i" "$verdict" "$med" "$lo" "$hi" "$contains" "$floor"
done
echo "A/A: $n runs, $sig significant, $miss intervals without 1.0"
