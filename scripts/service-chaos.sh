#!/usr/bin/env bash
# Chaos run of the service (prints figures): SIGKILL of `maxcode serve` and of `maxcode
# runner` at random moments, KILLS times over a stream of webhooks (with redeliveries),
# then counts jobs lost, duplicate jobs and duplicate PRs on the local GitHub. ctest runs
# the same tests with 6 kills; this runs them long.
#
# REPLICAS 1: one service on its SQLite store (the default). REPLICAS 2: two replicas
# sharing a PostgreSQL store (started in a temp dir by the test; Debian's postgresql),
# each webhook sent to a random replica, either replica or its runner killed.
#
#   scripts/service-chaos.sh [KILLS] [REPOSITORIES] [SEED] [REPLICAS]
set -euo pipefail
cd "$(dirname "$0")/.."
case "${4:-1}" in
  1) test='Serve.KillsAtRandomMoments*' ;;
  2) test='Serve.KillsOfEitherReplica*' ;;
  *) echo "service-chaos.sh: REPLICAS is 1 (SQLite) or 2 (PostgreSQL), not '$4'" >&2; exit 2 ;;
esac
MAXCODE_CHAOS_KILLS=${1:-100} MAXCODE_CHAOS_REPOS=${2:-20} MAXCODE_CHAOS_SEED=${3:-14} \
  "${MAXCODE_TEST_DIR:-build/tests}/server_test" --gtest_filter="$test"
