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
#   scripts/service-load.sh --replicas 2 [RATES] [SECONDS_PER_RATE]
#
# --replicas 2: two `maxcode serve` sharing a PostgreSQL store (scripts/postgres-temp.sh
# starts one in a temp dir), each webhook sent to one of them at random.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${MAXCODE_BIN:-build/maxcode}
slow=0
replicas=1
if [ "${1:-}" = --replicas ]; then
  replicas=$2
  shift 2
fi
if [ "${1:-}" = --slow-connections ]; then
  slow=$2
  shift 2
  set -- "" "${1:-10}"
fi
rates=${1:-250 500 1000 1500 2000 3000}
seconds=${2:-5}
dir=$(mktemp -d)
pgdir=
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [ -z "$pgdir" ] || { scripts/postgres-temp.sh stop "$pgdir"; rm -rf "$pgdir"; }
  rm -rf "$dir"
}
trap cleanup EXIT
# Dirty pages of a build or test just before (hundreds of MB) are written back while the
# store fsyncs, and a p99 then measures the disk: flush them first (a run right after a
# build gave p99 52-240 ms at 1,000/s, the same run after a sync 4.8 ms).
sync
export MAXCODE_WEBHOOK_SECRET="load-test-$RANDOM$RANDOM"
store=(--db "$dir/queue.sqlite")
if [ "$replicas" -gt 1 ]; then
  pgdir=$(mktemp -u /tmp/maxcode-load-pg-XXXXXX)  # under /tmp: the postgres user must reach it
  store=(--store "$(scripts/postgres-temp.sh start "$pgdir")")
  echo '{"data_dir": "'"$dir"'/data"}' > "$dir/service.json"
  store+=(--config "$dir/service.json")
fi
ports=()
for i in $(seq "$replicas"); do
  "$bin" serve --listen 127.0.0.1:0 "${store[@]}" 2> "$dir/serve-$i.log" &
  pids+=($!)
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/serve-$i.log")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$dir/serve-$i.log"; exit 1; }
  ports+=("$port")
done
port=$(IFS=,; echo "${ports[*]}")
if [ "$slow" -gt 0 ]; then
  echo "maxcode serve on 127.0.0.1:$port ($(nproc) cores)"
  node scripts/service-load.mjs --port "$port" --secret "$MAXCODE_WEBHOOK_SECRET" --slow-connections "$slow" --seconds "$seconds"
  exit 0
fi
echo "maxcode serve x$replicas on 127.0.0.1:$port ($(nproc) cores, store: ${store[1]}); $seconds s per rate"
node scripts/service-load.mjs --port "$port" --secret "$MAXCODE_WEBHOOK_SECRET" --rates "$rates" --seconds "$seconds"
if [ "$replicas" -gt 1 ]; then
  echo "stored deliveries: $(/usr/lib/postgresql/*/bin/psql -tA "${store[1]}" -c 'select count(*) from deliveries')"
else
  echo "stored deliveries: $(sqlite3 "$dir/queue.sqlite" 'select count(*) from deliveries' 2>/dev/null || echo '(sqlite3 not installed)')"
fi
