#!/usr/bin/env bash
# Sets up, builds and runs `maxcode optimize` on the bundled CPU example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The maxcode binary and the libraries it loads, not the ~400 targets of the test suite.
scripts/build.sh maxcode
out=${1:-maxcode-out/cpu-histogram}
build/maxcode optimize examples/cpu-histogram --out "$out"
echo "---"
echo "report: $out/report.md"
