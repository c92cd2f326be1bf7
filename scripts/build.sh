#!/usr/bin/env bash
# Configures and builds maxcode and its tests into build/ (Ninja, RelWithDebInfo).
# With target names (scripts/build.sh maxcode), builds only those and what they need.
# With ccache present, compilations are cached across checkouts of this machine (a
# clean clone or a second worktree rebuilds from the cache): paths are hashed relative
# to the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# A full build takes ~3 GB (README); a disk that fills mid-build fails in the linker with
# SIGBUS, far from the cause: say so first.
free_kb=$(df -Pk . | awk 'NR == 2 {print $4}')
if [ -n "$free_kb" ] && [ "$free_kb" -lt $((4 * 1024 * 1024)) ]; then
  echo "build.sh: warning: $((free_kb / 1024)) MB free on the disk of $PWD; the full build takes about 3 GB" >&2
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
cmake --build build -j"$(nproc)" ${1:+--target "$@"}
