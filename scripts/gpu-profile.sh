#!/usr/bin/env bash
# GPU evidence for the profiler (docs/profiling.md): on examples/cuda-multistream,
#   1. `maxcode profile` (CUPTI injection + CPU sampler): ranked kernels, GPU busy time
#      against wall time, profile.json; once with the streams chained, once concurrent;
#   2. Nsight Compute on the same program, same arguments and seed:
#      ncu --clock-control none --metrics gpu__time_duration.sum
#   3. the same program with no profiler attached, each launch timed alone by CUDA
#      events (multistream --events): an upper bound on each kernel's time;
#   4. a per-kernel table of the three, with each kernel's fastest and slowest launch (from
#      the CUPTI injection's own summary of one more run, and from ncu); it fails when a
#      kernel's launches differ from ncu's, or its mean time lies outside the range that
#      ncu and the events span, widened by 5% on either side.
# Why a range and not ncu alone: on an H200, streaming kernels (saxpy, blur) run 4-6%
# faster under ncu than in a plain process: every launch, with the device idle before
# each or not, the L2 cache clean or dirty; the events of a run with no profiler give
# the plain-process time (saxpy: events 251.6 us, CUPTI 253.9, ncu 238.7). A profiler
# that agrees with either measure has timed the kernel; one outside both has not.
#
# Usage:
#   scripts/gpu-profile.sh build   # on the build machine (nvcc, no GPU needed): builds
#                                  # maxcode into build/ and the example (sm_90, -g)
#   scripts/gpu-profile.sh [run]   # on the GPU machine: builds nothing
# The GPU machine needs build/maxcode, build/lib/ (libmaxcode_sampler.so,
# libmaxcode_cupti.so and the shared libraries that travel) and
# examples/cuda-multistream/build/multistream: carry build and
# examples/cuda-multistream/build (both ignored by git).
# Environment: MAXCODE (default build/maxcode), OUT (default maxcode-out/gpu-profile),
# ROUNDS (default 20), TOLERANCE (default 0.05).
set -euo pipefail
cd "$(dirname "$0")/.."
example=examples/cuda-multistream
mode=${1:-run}

if [ "$mode" = build ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build --target maxcode
  # -g: host debug info, through which kernels map to their definitions; -lineinfo:
  # device line tables (neither changes the device code).
  cmake -S "$example" -B "$example/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_FLAGS="-g -lineinfo" -DCMAKE_CXX_FLAGS="-g" >/dev/null
  cmake --build "$example/build" -j
  echo "built: build/maxcode, build/lib/, $example/build/multistream"
  exit 0
fi

maxcode=${MAXCODE:-build/maxcode}
out=${OUT:-maxcode-out/gpu-profile}
rounds=${ROUNDS:-20}
tolerance=${TOLERANCE:-0.05}
seed=1234567  # the first of maxcode's default MAXCODE_SEED values, which profile uses
for need in "$maxcode" "$example/build/multistream"; do
  [ -x "$need" ] || { echo "missing $need: run 'scripts/gpu-profile.sh build' on the build machine" >&2; exit 2; }
done
command -v ncu >/dev/null || { echo "ncu not found (Nsight Compute)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 not found" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'

# Configs for the two runs, beside the results (the example's own config is untouched).
cfg() {  # cfg NAME ARGS
  python3 - "$example/.maxcode.json" "$out/$1.json" "$2" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["benchmarks"] = [{"name": "main", "command": "./build/multistream " + sys.argv[3], "timeout_s": 300}]
json.dump(config, open(sys.argv[2], "w"), indent=2)
PY
}
cfg chained "$rounds"
cfg concurrent "$rounds --concurrent"

echo "== maxcode profile $example ($rounds rounds, launches chained across 4 streams)"
"$maxcode" profile "$example" --no-build --config "$out/chained.json" --out "$out/chained" --top 12 -q
echo
echo "== maxcode profile $example ($rounds rounds, --concurrent)"
"$maxcode" profile "$example" --no-build --config "$out/concurrent.json" --out "$out/concurrent" --top 12 -q
echo

echo "== ncu --clock-control none --metrics gpu__time_duration.sum (same program, arguments, seed)"
# --cache-control none: caches stay as the program leaves them, as in the profiled run.
(cd "$example" && MAXCODE_SEED=$seed ncu --clock-control none --cache-control none \
   --metrics gpu__time_duration.sum --csv --print-units base --print-kernel-base mangled \
   --log-file "$out/ncu.csv" ./build/multistream "$rounds" >/dev/null)

# The CUPTI injection alone on the same run, its summary kept: each kernel's fastest and
# slowest launch beside ncu's, which tells a gap in the means that every launch has from
# one that a few slow launches make. (profile.json keeps totals only.)
lib=$(cd "$(dirname "$maxcode")/lib" && pwd)/libmaxcode_cupti.so
rm -rf "$out/raw" && mkdir -p "$out/raw"
if [ -f "$lib" ]; then
  (cd "$example" && MAXCODE_SEED=$seed MAXCODE_PROFILE_DIR="$out/raw" CUDA_INJECTION64_PATH="$lib" \
     ./build/multistream "$rounds" >/dev/null)
fi

# The third measure: no profiler, each launch alone between CUDA events.
(cd "$example" && MAXCODE_SEED=$seed ./build/multistream "$rounds" --events > "$out/events.txt")

python3 - "$out/chained/profile.json" "$out/ncu.csv" "$tolerance" "$out/raw" "$out/events.txt" <<'PY'
import csv, glob, json, os, sys
profile_file, ncu_file, tolerance, raw_dir, events_file = sys.argv[1:6]
tolerance = float(tolerance)
events = {}  # short name (no return type, no parameters) -> mean us of a launch
for line in open(events_file):
    if line.startswith("events "):
        _, name, value, _unit = line.split()
        events[name] = float(value)
def short(demangled):
    name = demangled.split("(")[0]
    return name[5:] if name.startswith("void ") else name
ours = {}
for e in json.load(open(profile_file))["kernels"]:  # maxcode-profile/2: GPU kernels in their own list
    ours[e["symbol"] or e["name"]] = (e["name"], e["calls"], e["self"])
spread = {}  # mangled name -> (fastest, slowest) launch in us, from the injection's own summary
for path in glob.glob(os.path.join(raw_dir, "gpu-*.json")):
    for k in json.load(open(path)).get("kernels", []):
        spread[k["name"]] = (k["min_ns"] / 1e3, k["max_ns"] / 1e3)
theirs = {}
rows = [line for line in open(ncu_file) if line.startswith('"')]  # skip ==PROF== lines
for row in csv.DictReader(rows):
    if row["Metric Name"] != "gpu__time_duration.sum":
        continue
    unit = row["Metric Unit"]
    scale = {"nsecond": 1, "ns": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9}.get(unit)
    if scale is None:
        sys.exit("ncu: unexpected unit " + unit)
    value = float(row["Metric Value"].replace(",", "")) * scale
    launches, total, low, high = theirs.get(row["Kernel Name"], (0, 0.0, float("inf"), 0.0))
    theirs[row["Kernel Name"]] = (launches + 1, total + value, min(low, value), max(high, value))
print("%-36s %8s %5s %11s %10s %8s %10s %8s   %s" % ("kernel", "launches", "ncu", "maxcode us", "ncu us", "diff",
                                                    "events us", "diff", "fastest-slowest launch us: maxcode | ncu"))
worst, failures = 0.0, []
for key in sorted(set(ours) | set(theirs), key=lambda k: -ours.get(k, ("", 0, 0))[2]):
    name, n, total = ours.get(key, (key, 0, 0.0))
    m, ncu_total, ncu_low, ncu_high = theirs.get(key, (0, 0.0, float("nan"), float("nan")))
    mean = total / n / 1e3 if n else float("nan")
    ncu_mean = ncu_total / m / 1e3 if m else float("nan")
    diff = (mean - ncu_mean) / ncu_mean if n and m else float("nan")
    event = events.get(short(name), float("nan"))
    event_diff = (mean - event) / event if n and event == event else float("nan")
    low, high = spread.get(key, (float("nan"), float("nan")))
    print("%-36s %8d %5d %11.2f %10.2f %+7.2f%% %10.2f %+7.2f%%   %.2f-%.2f | %.2f-%.2f" %
          (name[:36], n, m, mean, ncu_mean, diff * 100, event, event_diff * 100, low, high,
           ncu_low / 1e3, ncu_high / 1e3))
    # The range the two references span (ncu alone where the events did not time it).
    references = [v for v in (ncu_mean, event) if v == v]
    floor, ceiling = min(references) * (1 - tolerance), max(references) * (1 + tolerance)
    if n != m:
        failures.append("%s: %d launches seen, ncu %d" % (name, n, m))
    elif not floor <= mean <= ceiling:
        failures.append("%s: %.2f us outside [%.2f, %.2f] (ncu %+.2f%%, events %+.2f%%)" %
                        (name, mean, floor, ceiling, diff * 100, event_diff * 100))
    else:
        worst = max(worst, min(abs(d) for d in (diff, event_diff) if d == d))
if failures:
    print("FAIL (tolerance %.0f%%): %s" % (tolerance * 100, "; ".join(failures)))
    sys.exit(1)
print("OK: every kernel within its ncu-events range; nearest reference at most %.2f%% away (tolerance %.0f%%)" %
      (worst * 100, tolerance * 100))
PY
echo "results in $out (profile.json per run, ncu.csv, events.txt)"
