#!/usr/bin/env bash
# Everything GPU-side in one run (issue 5's evidence), on the GPU machine:
#   1. the GPU tests (tests/gpu/, ctest label `gpu`): the cheat suites and the faults;
#      and process_test, the sandbox as it holds on a machine without bubblewrap; and
#      cgroup_test and evaluator_test's limit tests, the limits on its cgroup layout;
#   2. `maxcode optimize` on examples/cuda-kernels with `tune` and with `replay`:
#      winners, confirmed speedups with intervals, % of roofline, the A/A run;
#   3. each winner's confirmed speedup against its witness: Nsight Compute's speedup over
#      the launches the timer counts (ncu --clock-control none --cache-control none, in
#      a process of its own; scripts/gpu-check-summary.py says why not the profiles');
#   4. the profiler check (scripts/gpu-profile.sh);
#   5. the plain-benchmark cheat suite: `maxcode optimize --policy replay` on
#      examples/cuda-plain (a benchmark that reuses its buffers and prints a checksum),
#      each candidate's verdict and reason (examples/cuda-plain/cheats-expected.json);
#   6. a project as a new user has it (examples/cuda-ops, no .maxcode.json): `maxcode
#      init`, the profile, `maxcode optimize` with no function named and the replay
#      candidates that rewrite the hottest kernel in place, the profile of the winner,
#      and the confirmed speedup against the ratio of the benchmark's own CUDA-event
#      times of the same two versions;
# and prints a short table last.
#
# Usage: here (no GPU needed) `scripts/gpu-bundle.sh`, then on the GPU machine, with
# .gpu carried: `scripts/gpu-check.sh` (it copies .gpu/build to build/ first).
# Environment: OUT (default maxcode-out/gpu-check), TOLERANCE (default 0.05), PARTS
# (default "tests tune replay profile plain ops": a subset runs only those, e.g. when one call to
# the GPU machine has a time limit; the summary covers what is in OUT), TESTS (part 1: only
# these test programs, e.g. "device_shim_test plain_cheat_suite_test"; default all).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-maxcode-out/gpu-check}
tolerance=${TOLERANCE:-0.05}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -d .gpu/build ]; then rm -rf build && cp -r .gpu/build build; fi
[ -f .gpu/STAMP ] && echo "bundle: $(cat .gpu/STAMP)"
[ -x build/maxcode ] || { echo "build/maxcode missing: run scripts/gpu-bundle.sh on the build machine" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | sed 's/^/gpu: /'
example=examples/cuda-kernels
rm -rf "$example/build"
status=0
parts=${PARTS:-tests tune replay profile plain ops}
want() { [[ " $parts " == *" $1 "* ]]; }
# Full outputs stay in $work; $out gets what a reader needs (few files travel back).
work=${WORK:-maxcode-out/gpu-check-work}
keep() { mkdir -p "$out/$1" && cp "$work/$1/result.json" "$work/$1/report.md" "$out/$1/" 2>/dev/null; }

want tests && echo "== 1. GPU tests (label gpu)"
# The test programs find the checkout and maxcode relative to themselves; said here too,
# so that nothing depends on the path they were built at.
export MAXCODE_SOURCE_DIR=$PWD MAXCODE_BINARY=$PWD/build/maxcode
want tests && for t in build/tests/*_test; do
  [ -z "${TESTS:-}" ] || [[ " $TESTS " == *" $(basename "$t") "* ]] || continue
  # The bundle's shared libraries (libgit2 and others Ubuntu lacks) are beside maxcode.
  # Of the evaluator's CPU tests, only those about the machine: limits and the cache.
  filter=()
  [ "$(basename "$t")" = evaluator_test ] && filter=(--gtest_filter='EvaluatorLimits.*:EvaluatorCache.*')
  LD_LIBRARY_PATH=$PWD/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} MAXCODE_GPU_TEST_OUT=$out "$t" "${filter[@]}" 2>&1 | tee "$out/$(basename "$t").log" | grep -E "^(cheat|fault) |^A/A|OK \]|FAILED|Failure|expected|Skipped" 
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done

if want tune; then
  echo "== 2. maxcode optimize $example (tune)"
  build/maxcode optimize "$example" --out "$work/tune" -q 2>&1 | tail -25 | tee "$out/tune.log"
  keep tune
fi
want replay && echo "== 2. maxcode optimize $example (replay)"
if want replay; then
  build/maxcode optimize "$example" --policy replay --replay-dir "$example/replay/transpose" --out "$work/replay" -q 2>&1 \
    | tail -25 | tee "$out/replay.log"
  keep replay
fi

if want plain; then
  echo "== 5. plain-benchmark cheat suite (examples/cuda-plain, replay)"
  rm -rf examples/cuda-plain/build
  build/maxcode optimize examples/cuda-plain --policy replay --replay-dir examples/cuda-plain/replay \
    --out "$work/plain" -q > "$out/plain.log" 2>&1
  keep plain
  python3 scripts/plain-verdicts.py "$work/plain/result.json" examples/cuda-plain/cheats-expected.json || status=1
fi

if want ops; then
  echo "== 6. examples/cuda-ops: init, profile, optimize (no function named, replay), profile of the winner"
  ops=examples/cuda-ops
  rm -rf "$ops/build" "$ops/.maxcode.json" "$work/ops" "$work/ops-after"
  build/maxcode init "$ops" -q > "$out/ops-init.log" 2>&1 || status=1
  cat "$out/ops-init.log"
  build/maxcode profile "$ops" --out "$work/ops-profile-before" -q > "$out/ops-profile-before.log" 2>&1
  echo "-- profile of the original"; head -14 "$out/ops-profile-before.log"
  build/maxcode optimize "$ops" --policy replay --replay-dir "$ops/replay" --out "$work/ops" -q 2>&1 \
    | tail -25 | tee "$out/ops.log"
  keep ops
  if [ -s "$work/ops/patch.diff" ]; then
    # The winner as a project of its own: its profile, and the benchmark's own CUDA-event
    # time of both versions (ops_bench prints it on stderr).
    # Outside maxcode-out, which maxcode never reads as sources.
    after=$(mktemp -d)/cuda-ops-after
    mkdir -p "$after" && cp -r "$ops/." "$after/" && rm -rf "$after/build"
    strip=$(python3 -c "import sys,re; m=re.search(r'^\+\+\+ b/(.*)$', open(sys.argv[1]).read(), re.M); print(m.group(1).split('/').index('src'))" "$work/ops/patch.diff")
    patch -s -p"$((strip + 1))" -d "$after" < "$work/ops/patch.diff" || status=1
    build/maxcode profile "$after" --out "$work/ops-profile-after" -q > "$out/ops-profile-after.log" 2>&1
    echo "-- profile of the winner"; head -14 "$out/ops-profile-after.log"
    for side in "$ops" "$after"; do
      (cd "$side" && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j >/dev/null)
    done
    python3 - "$ops/build/ops_bench" "$after/build/ops_bench" "$work/ops/result.json" <<'PY' | tee "$out/ops-events.txt"
import json, re, statistics, subprocess, sys
def event_ms(binary):
    times = []
    for _ in range(7):
        err = subprocess.run([binary], capture_output=True, text=True, env={"MAXCODE_SEED": "1234567"}).stderr
        times.append(float(re.search(r"in ([0-9.]+) ms \(CUDA events\)", err).group(1)))
    return statistics.median(times)
before, after = event_ms(sys.argv[1]), event_ms(sys.argv[2])
confirmed = json.load(open(sys.argv[3]))["winner"]["speedup"]["median"]
print("ops CUDA events: original %.3f ms, winner %.3f ms: %.3fx; maxcode confirmed %.3fx (%+.1f%%)"
      % (before, after, before / after, confirmed, (confirmed / (before / after) - 1) * 100))
PY
  else
    echo "ops: no winner, no patch"; status=1
  fi
fi

want profile && echo "== 4. profiler check"
if want profile && [ -x .gpu/examples/cuda-multistream/build/multistream ]; then
  mkdir -p examples/cuda-multistream/build && cp .gpu/examples/cuda-multistream/build/multistream examples/cuda-multistream/build/
  OUT=$out/profile bash scripts/gpu-profile.sh > "$out/profile.log" 2>&1 || status=1
  tail -9 "$out/profile.log"
fi

echo
echo "== summary"
python3 scripts/gpu-check-summary.py "$out" "$tolerance" || status=1
exit $status
