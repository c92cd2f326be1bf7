#!/usr/bin/env bash
# Puts maxcode on the job's PATH: a binary already on the runner (input maxcode-path), or
# a build of this action's own source (the repository it lives in), through ccache when
# the runner has it. Sets the output `maxcode` and MAXCODE_BIN for later steps.
set -euo pipefail
error() { echo "::error title=maxcode::$*"; echo "maxcode: $*" >&2; exit 1; }

if [ -n "${MAXCODE_PATH:-}" ]; then
  [ -x "$MAXCODE_PATH" ] || error "maxcode-path: $MAXCODE_PATH is not an executable file"
  bin=$(cd "$(dirname "$MAXCODE_PATH")" && pwd)/$(basename "$MAXCODE_PATH")
else
  source_dir=$(cd "${GITHUB_ACTION_PATH:?}/.." && pwd)
  [ -f "$source_dir/CMakeLists.txt" ] || error "no maxcode source at $source_dir and no maxcode-path given"
  build_dir="${RUNNER_TEMP:-/tmp}/maxcode-build"
  launcher=()
  if command -v ccache >/dev/null 2>&1; then
    export CCACHE_BASEDIR="$source_dir" CCACHE_NOHASHDIR=true
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  cmake -S "$source_dir" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF "${launcher[@]}"
  cmake --build "$build_dir" -j"$(nproc)" --target maxcode
  bin="$build_dir/maxcode"
fi
"$bin" --version
echo "maxcode=$bin" >> "$GITHUB_OUTPUT"
echo "MAXCODE_BIN=$bin" >> "$GITHUB_ENV"
