#!/usr/bin/env bash
# Load benchmark of `maxcode serve` (prints figures; not a pass/fail test): signed
# webhooks at steady rates on loopback, p50/p99 latency of the 202 and the highest rate
# held with p99 under 20 ms. The service runs as in production (WAL store, the event
# worker handling every delivery meanwhile); only 127.0.0.1 is contacted.
#
#   scripts/service-load.sh [RATES] [SECONDS_PER_RATE]      e.g. scripts/service-load.sh "500 1000 2000" 10
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${MAXCODE_BIN:-build/maxcode}
rates=${1:-250 500 1000 1500 2000 3000}
seconds=${2:-5}
dir=$(mktemp -d)
export MAXCODE_WEBHOOK_SECRET="load-test-$RANDOM$RANDOM"
"$bin" serve --listen 127.0.0.1:0 --db "$dir/queue.sqlite" 2> "$dir/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
port=
for _ in $(seq 100); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/serve.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$dir/serve.log"; exit 1; }
echo "maxcode serve on 127.0.0.1:$port ($(nproc) cores); $seconds s per rate"
node scripts/service-load.mjs --port "$port" --secret "$MAXCODE_WEBHOOK_SECRET" --rates "$rates" --seconds "$seconds"
echo "stored deliveries: $(sqlite3 "$dir/queue.sqlite" 'select count(*) from deliveries' 2>/dev/null || echo '(sqlite3 not installed)')"
