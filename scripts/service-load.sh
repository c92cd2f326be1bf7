#!/usr/bin/env bash
# Load benchmark of `maxcode serve` (prints figures; not a pass/fail test): signed
# webhooks at steady rates on loopback, p50/p99 latency of the 202 and the highest rate
# held with p99 under 20 ms. The service runs as in production (WAL store, the event
# worker handling every delivery meanwhile); only 127.0.0.1 is contacted.
#
# With --slow-connections N it holds N connections that never finish a request (half
# silent, half a header byte every 2 s) and prints the latency of /healthz and signed
# webhooks meanwhile (each must be under 1 s), and when the service closed the dawdlers.
#
#   scripts/service-load.sh [RATES] [SECONDS_PER_RATE]      e.g. scripts/service-load.sh "500 1000 2000" 10
#   scripts/service-load.sh --slow-connections 500 [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${MAXCODE_BIN:-build/maxcode}
slow=0
if [ "${1:-}" = --slow-connections ]; then
  slow=$2
  shift 2
  set -- "" "${1:-10}"
fi
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
if [ "$slow" -gt 0 ]; then
  echo "maxcode serve on 127.0.0.1:$port ($(nproc) cores)"
  node scripts/service-load.mjs --port "$port" --secret "$MAXCODE_WEBHOOK_SECRET" --slow-connections "$slow" --seconds "$seconds"
  exit 0
fi
echo "maxcode serve on 127.0.0.1:$port ($(nproc) cores); $seconds s per rate"
node scripts/service-load.mjs --port "$port" --secret "$MAXCODE_WEBHOOK_SECRET" --rates "$rates" --seconds "$seconds"
echo "stored deliveries: $(sqlite3 "$dir/queue.sqlite" 'select count(*) from deliveries' 2>/dev/null || echo '(sqlite3 not installed)')"
