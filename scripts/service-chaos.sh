#!/usr/bin/env bash
# Chaos run of the service (prints figures): SIGKILL of `maxcode serve` and of `maxcode
# runner` at random moments, KILLS times over a stream of webhooks (with redeliveries),
# then counts jobs lost, duplicate jobs and duplicate PRs on the local GitHub. ctest runs
# the same test with 6 kills; this runs it long.
#
#   scripts/service-chaos.sh [KILLS] [REPOSITORIES] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
MAXCODE_CHAOS_KILLS=${1:-100} MAXCODE_CHAOS_REPOS=${2:-20} MAXCODE_CHAOS_SEED=${3:-14} \
  "${MAXCODE_TEST_DIR:-build/tests}/server_test" --gtest_filter='Serve.KillsAtRandomMoments*'
