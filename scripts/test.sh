#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/format-check.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 900
