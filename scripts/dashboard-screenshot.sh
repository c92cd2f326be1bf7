#!/usr/bin/env bash
# Screenshots of `maxcode serve`'s dashboard (/) and sweep trend page (/trend), taken
# with headless Chromium.
#
#   scripts/dashboard-screenshot.sh [OUT_DIR] [STATE_DIR]
#
# STATE_DIR: a folder holding a service store (service.sqlite) and a history store
# (history.sqlite), e.g. one kept by
#   MAXCODE_KEEP_TEST_DIRS=1 build/tests/server_test --gtest_filter='Serve.ScheduledSweeps*'
# (copied, never changed). Without it the service starts empty with a small made-up
# history: three nights of two functions, one of which got slower.
# Needs chromium (apt-get install chromium) and sqlite3. MAXCODE: the binary (build/maxcode).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dashboard-screenshots}
state=${2:-}
maxcode=${MAXCODE:-$PWD/build/maxcode}
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "dashboard-screenshot: needs chromium (apt-get install chromium)" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "$state" ]; then
  cp "$state/service.sqlite" "$work/service.sqlite"
  cp "$state/history.sqlite" "$work/history.sqlite"
else
  # The history store's rows as runner/store/history.cc writes them.
  sqlite3 "$work/history.sqlite" <<'SQL'
CREATE TABLE nights (
  night TEXT NOT NULL, repository TEXT NOT NULL, target TEXT NOT NULL, file TEXT, commit_id TEXT,
  share REAL, self_ns REAL, samples INTEGER, original_s REAL, original_rounds TEXT,
  speedup REAL, speedup_low REAL, speedup_high REAL, status TEXT,
  pr_number INTEGER, pr_url TEXT, pr_state TEXT, commits_since TEXT,
  PRIMARY KEY (night, repository, target));
INSERT INTO nights VALUES
 ('2026-11-21 02:00','acme/twohot','sum_squares','src/sum.cpp','1dc78550e8c3ec509e4d5286f3944355958e94c1',0.45,4.2e7,420,0.094,'[0.094,0.095,0.093]',7.3,6.9,7.7,'winner',1,'https://github.com/acme/twohot/pull/1','created','[]'),
 ('2026-11-21 02:00','acme/twohot','dot','src/dot.cpp','1dc78550e8c3ec509e4d5286f3944355958e94c1',0.48,4.4e7,440,0.094,'[0.094,0.095,0.093]',NULL,NULL,NULL,'no winner',0,'','no winner','[]'),
 ('2026-11-22 02:00','acme/twohot','sum_squares','src/sum.cpp','89d917fbbffb3cedb1c9f1d18d14f358858053aa',0.45,4.3e7,430,0.095,'[0.095,0.096,0.094]',7.2,6.8,7.6,'winner',1,'https://github.com/acme/twohot/pull/1','updated','["89d917f docs: a readme"]'),
 ('2026-11-22 02:00','acme/twohot','dot','src/dot.cpp','89d917fbbffb3cedb1c9f1d18d14f358858053aa',0.48,4.3e7,430,0.095,'[0.095,0.096,0.094]',NULL,NULL,NULL,'no winner',0,'','no winner','["89d917f docs: a readme"]'),
 ('2026-11-23 02:00','acme/twohot','sum_squares','src/sum.cpp','8ed68f2208a4a283f60ad374257232f8f1b663bf',0.87,3.4e8,3400,0.52,'[0.52,0.53,0.51]',7.3,6.9,7.8,'winner',1,'https://github.com/acme/twohot/pull/1','updated','["8ed68f2 sum_squares: 64 passes"]'),
 ('2026-11-23 02:00','acme/twohot','dot','src/dot.cpp','8ed68f2208a4a283f60ad374257232f8f1b663bf',0.11,4.3e7,430,0.52,'[0.52,0.53,0.51]',NULL,NULL,NULL,'no winner',0,'','no winner','["8ed68f2 sum_squares: 64 passes"]');
SQL
fi

cat > "$work/service.json" <<JSON
{"listen": "127.0.0.1:0", "db": "$work/service.sqlite", "history": "$work/history.sqlite"}
JSON
MAXCODE_WEBHOOK_SECRET=screenshot MAXCODE_ADMIN_TOKEN=screenshot "$maxcode" serve --config "$work/service.json" \
  2> "$work/serve.log" &
pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "dashboard-screenshot: the service did not start:" >&2; cat "$work/serve.log" >&2; exit 1; }

shoot() {  # PATH FILE
  "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1400 \
    --user-data-dir="$work/chromium" --screenshot="$out/$2" "http://127.0.0.1:$port$1" 2>/dev/null
  echo "$out/$2"
}
shoot "/?token=screenshot" dashboard.png
shoot "/trend?token=screenshot" trend.png
