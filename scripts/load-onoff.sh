#!/usr/bin/env bash
# A bounded on/off CPU load generator for measuring the evaluator under bursty load:
# every PERIOD seconds (default 0.7) it picks a random number of busy processes between
# 0 and MAX (default 7) and runs them until the next switch. Stops by itself after
# SECONDS_TOTAL (default 120). Only local CPU work; no network, no files.
# Usage: scripts/load-onoff.sh [SECONDS_TOTAL] [MAX] [PERIOD]
set -euo pipefail
total=${1:-120}
max=${2:-7}
period=${3:-0.7}
end=$(( $(date +%s) + total ))
pids=()
stop() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; pids=(); }
trap 'stop; exit 0' INT TERM EXIT
while [ "$(date +%s)" -lt "$end" ]; do
  stop
  n=$(( RANDOM % (max + 1) ))
  for _ in $(seq "$n"); do ( while :; do :; done ) & pids+=($!); done
  sleep "$period"
done
