#!/usr/bin/env bash
# The evaluator's own cost: for one candidate of the CPU example, the wall time maxcode
# spends against the same commands run by hand, the same number of times, in a plain
# copy (no sandbox, no checks, no statistics). Prints both and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=examples/cpu-histogram
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$repo/src/histogram.cpp" "$work/"
sed -n '/^void histogram/,/^}/p' "$repo/src/histogram.cpp" | sed 's/LANES/4/g' > "$work/four.cpp"
build/maxcode eval "$repo" --function histogram --candidate "$work/four.cpp" --out "$work/out" -q 2>/dev/null
read -r wall rounds < <(jq -r '.candidates[0] | [.wall_s, .timing.speedup.rounds] | @tsv' "$work/out/result.json")
warmup=$(jq -r '.settings.warmup_rounds' "$work/out/result.json")
seeds=$(jq -r '.settings.seeds | length' "$work/out/result.json")
runs=$(( 2 * (rounds + warmup) ))
# By hand: configure, build, test, one run per seed, then the timed runs of both sides.
cp -r "$repo" "$work/hand" && rm -rf "$work/hand/build"
# The same compiler cache the evaluator uses, so both builds hit it alike.
export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR="${MAXCODE_CACHE_DIR:-$HOME/.cache/maxcode}/ccache" \
       CCACHE_BASEDIR="$work/hand" CCACHE_NOHASHDIR=true
start=$(date +%s.%N)
(
  cd "$work/hand"
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j >/dev/null
  ctest --test-dir build >/dev/null
  for s in $(seq "$seeds"); do MAXCODE_SEED=$s ./build/bench >/dev/null; done
  for r in $(seq "$runs"); do MAXCODE_SEED=1 ./build/bench >/dev/null; done
)
end=$(date +%s.%N)
hand=$(echo "$end - $start" | bc)
printf 'evaluator: %.2f s for one candidate (%d timing rounds)\n' "$wall" "$rounds"
printf 'by hand:   %.2f s for the same commands (%d benchmark runs)\n' "$hand" "$((seeds + runs))"
printf 'ratio:     %.2fx\n' "$(echo "$wall / $hand" | bc -l)"
