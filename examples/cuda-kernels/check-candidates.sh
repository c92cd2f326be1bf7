#!/usr/bin/env bash
# Checks that every candidate in replay/*/, cheats/ and faults/ compiles (it cannot run
# them: that needs a GPU). For each .cu candidate: a scratch copy of the example, the
# launcher's definition in src/<file>.cu (from the line that starts with
# `void <name>(` to the next `}` in column 0) replaced by the candidate's text, that file
# compiled with nvcc, and bench and kernels_test linked against it. For each .diff: a
# scratch copy, `git apply --check`, then the patch applied and the .cu files it touches
# compiled (CMakeLists.txt: configured with cmake).
#
#   examples/cuda-kernels/check-candidates.sh            # all candidates
#   NVCC=/path/to/nvcc ARCH=sm_90 examples/cuda-kernels/check-candidates.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${ARCH:-sm_90}
FLAGS=(-std=c++17 -O3 -lineinfo -arch="$ARCH")
scratch=$(mktemp -d /tmp/check-candidates.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

pass=0
fail=0
report() {  # name status [log]
  if [ "$2" = ok ]; then
    pass=$((pass + 1))
    printf '  ok    %s\n' "$1"
  else
    fail=$((fail + 1))
    printf '  FAIL  %s: %s\n' "$1" "$2"
    [ -n "${3:-}" ] && sed 's/^/        /' "$3" | head -40
  fi
}

copy_example() {  # dest
  mkdir -p "$1"
  (cd "$here" && cp -r CMakeLists.txt src tests bench "$1"/)
}

# Objects of the original sources, for linking.
base="$scratch/base"
copy_example "$base"
echo "compiling the original sources with $NVCC ($ARCH)"
for f in src/transpose.cu src/reduce.cu src/stencil.cu bench/bench.cu tests/kernels_test.cu; do
  obj="$base/$(basename "$f" .cu).o"
  if ! "$NVCC" "${FLAGS[@]}" -I"$base/src" -c "$base/$f" -o "$obj" >"$scratch/log" 2>&1; then
    report "original $f" "does not compile" "$scratch/log"
    exit 1
  fi
done

# target_of <candidate path relative to the example>: "<source file> <function>"
target_of() {
  case "$1" in
    replay/reduce/*) echo "src/reduce.cu reduce_sum" ;;
    replay/stencil/*) echo "src/stencil.cu stencil5" ;;
    *) echo "src/transpose.cu transpose" ;;
  esac
}

check_definition() {  # candidate (relative)
  local rel=$1 name=${1//\//_}
  local work="$scratch/$name"
  read -r file function <<<"$(target_of "$rel")"
  copy_example "$work"
  if ! grep -q "^void $function(" "$here/$rel"; then
    report "$rel" "defines no 'void $function(' at the start of a line"
    return
  fi
  # Replace the launcher: from '^void <function>(' through the next '^}'.
  if ! awk -v fn="void $function(" -v cand="$here/$rel" '
      BEGIN { state = 0 }
      state == 0 && index($0, fn) == 1 {
        while ((getline line < cand) > 0) print line
        state = 1; next
      }
      state == 1 { if ($0 == "}") state = 2; next }
      { print }
      END { if (state != 2) exit 1 }' "$here/$file" >"$work/$file"; then
    report "$rel" "could not find the definition of $function in $file"
    return
  fi
  local stem
  stem=$(basename "$file" .cu)
  if ! "$NVCC" "${FLAGS[@]}" -I"$work/src" -c "$work/$file" -o "$work/$stem.o" >"$work/log" 2>&1; then
    report "$rel" "does not compile" "$work/log"
    return
  fi
  local objs=()
  for s in transpose reduce stencil; do
    if [ "$s" = "$stem" ]; then objs+=("$work/$s.o"); else objs+=("$base/$s.o"); fi
  done
  for prog in bench kernels_test; do
    if ! "$NVCC" -arch="$ARCH" "$base/$prog.o" "${objs[@]}" -o "$work/$prog.out" -lpthread -ldl >"$work/log" 2>&1; then
      report "$rel" "does not link ($prog)" "$work/log"
      return
    fi
  done
  report "$rel" ok
}

check_diff() {  # candidate (relative)
  local rel=$1 name=${1//\//_}
  local work="$scratch/$name"
  copy_example "$work"
  if ! (cd "$work" && git apply --check "$here/$rel") >"$work/log" 2>&1; then
    report "$rel" "git apply --check fails" "$work/log"
    return
  fi
  (cd "$work" && git apply "$here/$rel")
  local touched
  touched=$(cd "$work" && git apply --numstat "$here/$rel" | awk '{ print $3 }')
  for f in $touched; do
    case "$f" in
      *.cu)
        if ! "$NVCC" "${FLAGS[@]}" -I"$work/src" -c "$work/$f" -o "$work/$(basename "$f" .cu).o" >"$work/log" 2>&1; then
          report "$rel" "$f does not compile after the patch" "$work/log"
          return
        fi ;;
      CMakeLists.txt)
        if ! cmake -S "$work" -B "$work/build" -DCMAKE_CUDA_COMPILER="$NVCC" >"$work/log" 2>&1; then
          report "$rel" "CMakeLists.txt does not configure after the patch" "$work/log"
          return
        fi ;;
    esac
  done
  report "$rel ($(echo $touched | tr ' ' ','))" ok
}

cd "$here"
for rel in replay/*/*.cu cheats/*.cu faults/*.cu; do
  [ -f "$rel" ] && check_definition "$rel"
done
for rel in replay/*/*.diff cheats/*.diff faults/*.diff; do
  [ -f "$rel" ] && check_diff "$rel"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
