#!/usr/bin/env bash
# One search over 1 GPU and over 2 (issue 26, point 1), on a machine with two or more:
#   1. `maxcode optimize examples/cuda-plain --policy replay` (13 candidates: 12 cheats and
#      the honest rewrite, four per step) with CUDA_VISIBLE_DEVICES naming the first N GPUs,
#      for each N of COUNTS: the search's wall time, the candidates timed per GPU-hour, where
#      the time went (builds and checks on the CPU cores, timing sessions on the GPUs, the
#      rest: baseline, A/A, confirmation, sanitizer, witness), and each candidate's verdict,
#      held against cheats-expected.json (scripts/plain-verdicts.py);
#   2. an A/A on each GPU while the other is busy: a candidate identical to the original
#      (`maxcode eval`), AA_RUNS times on every GPU at once, each GPU's runs beside the
#      others' (their builds, checks and timing sessions);
# and prints a table last: the runs side by side, whether the verdicts are identical, each
# A/A interval and whether it covers 1.0, and the scaling to 4 and 8 GPUs expected from
# where the time went (the search's batch of four caps the GPUs one step can use).
#
# Usage: here (no GPU needed) `scripts/gpu-bundle.sh`, then on the GPU machine, with .gpu
# carried: `scripts/gpu-scaling.sh`. One call of the GPU machine may not hold every part:
#   COUNTS=1 PARTS="search aa" scripts/gpu-scaling.sh     # then
#   COUNTS=2 PARTS=search SUMMARY_FROM=DIR scripts/gpu-scaling.sh
# Environment: OUT (default maxcode-out/gpu-scaling), COUNTS (default "1 2"), PARTS
# (default "search aa"), AA_RUNS (default 2), SUMMARY_FROM (directories of earlier runs'
# OUT whose runs.json the table takes in too, separated by spaces).
# Writes OUT/runs.json (one record per search and per A/A run), OUT/scaling.md and one log
# per search; prints scaling.md last.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh gpu-scaling
mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader)
nvidia-smi --query-gpu=index,name,clocks.max.sm --format=csv,noheader | sed 's/^/gpu: /'
example=examples/cuda-plain
function=blur
parts=${PARTS:-search aa}
want() { [[ " $parts " == *" $1 "* ]]; }
work=${WORK:-maxcode-out/gpu-scaling-work}
mkdir -p "$work" && work=$(cd "$work" && pwd)
status=0
# One record per line, joined into runs.json at the end.
record() { echo "$1" >> "$out/runs.jsonl"; }
: > "$out/runs.jsonl"

if want search; then
  for n in ${COUNTS:-1 2}; do
    if [ "$n" -gt "${#gpus[@]}" ]; then
      echo "gpu-scaling: $n GPUs asked for, ${#gpus[@]} visible: skipped" >&2; status=2; continue
    fi
    visible=$(IFS=,; echo "${gpus[*]:0:$n}")
    echo "== search over $n GPU(s) (CUDA_VISIBLE_DEVICES=$visible)"
    rm -rf "$example/build" "$work/g$n"
    t0=$(date +%s.%N)
    CUDA_VISIBLE_DEVICES=$visible build/maxcode optimize "$example" --policy replay --replay-dir "$example/replay" \
      --out "$work/g$n" -q > "$out/search-g$n.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    tail -5 "$out/search-g$n.log"
    python3 scripts/plain-verdicts.py "$work/g$n/result.json" "$example/cheats-expected.json" "g$n" \
      | tee -a "$out/search-g$n.log" || status=1
    record "{\"kind\": \"search\", \"gpus\": $n, \"visible\": \"$visible\", \"exit_code\": $rc, \"wall_s\": $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'), \"result\": \"$work/g$n/result.json\"}"
  done
fi

if want aa; then
  echo "== A/A on every GPU at once (${AA_RUNS:-2} runs each)"
  scripts/original-definition.py "$example" "$function" "$work/same.cu" || exit 2
  for g in "${gpus[@]}"; do
    (
      # A copy of the project per GPU, so that the runs share nothing but the machine;
      # outside maxcode-out, which maxcode never reads as sources.
      repo=$(mktemp -d)/$(basename "$example")
      cp -r "$example" "$repo" && rm -rf "$repo/build"
      for ((i = 1; i <= ${AA_RUNS:-2}; i++)); do
        rm -rf "$work/aa-g$g-$i"
        CUDA_VISIBLE_DEVICES=$g build/maxcode eval "$repo" --function "$function" --candidate "$work/same.cu" \
          --out "$work/aa-g$g-$i" -q > "$work/aa-g$g-$i.log" 2>&1
        rc=$?
        [ $rc -eq 0 ] || { echo "A/A on GPU $g, run $i: exit code $rc"; tail -5 "$work/aa-g$g-$i.log"; } | tee -a "$out/aa.log"
        record "{\"kind\": \"aa\", \"gpu\": \"$g\", \"run\": $i, \"exit_code\": $rc, \"result\": \"$work/aa-g$g-$i/result.json\"}"
      done
    ) &
  done
  wait
fi

scripts/gpu-scaling-table.py "$out" ${SUMMARY_FROM:-} || status=1
exit $status
