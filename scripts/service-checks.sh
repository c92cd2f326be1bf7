#!/usr/bin/env bash
# Check runs under the race that left them running forever (prints figures): JOBS
# commands queued one after another while a runner long-polls, so that the runner claims
# each job while the event worker is still reporting it; then counts check runs per job
# on the local GitHub (exactly 1 each, 0 left queued or in progress), and runs Re-run,
# Re-run all and Redeliver once each. ctest runs the same test with 20 jobs.
#
#   scripts/service-checks.sh [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
MAXCODE_CHECK_JOBS=${1:-100} \
  "${MAXCODE_TEST_DIR:-build/tests}/server_test" --gtest_filter='Serve.OneCheckRunPerJob*'
