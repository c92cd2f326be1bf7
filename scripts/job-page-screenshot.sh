#!/usr/bin/env bash
# A screenshot of a job's page (GET /jobs/ID?exp=...&sig=..., what GitHub's "Details"
# opens) as a repository's developer sees it: headless Chromium with a fresh profile,
# no admin token, no cookie.
#
#   scripts/job-page-screenshot.sh URL [OUT.png]
#   scripts/job-page-screenshot.sh STATE_DIR [OUT.png] [JOB]
#
# URL: a signed link (a check run's Details, or a job's link on the dashboard).
# STATE_DIR: a folder holding a service store (service.sqlite) and its data dir
# (service.sqlite.d), e.g. one kept by
#   MAXCODE_KEEP_TEST_DIRS=1 build/tests/job_page_test --gtest_filter='JobPage.AFailed*'
# (copied, never changed): the service is started on the copy, the signed link of job
# JOB (default: the newest) is read from its dashboard with a token made up for this
# copy, and that link is opened without it. The copy's data dir and secrets are not the
# original's, so text that names the original's folder or tokens is shown as it is;
# to see a page exactly as a service serves it, give that service's URL.
# Every PNG goes where OUT.png says (never into the repository by default: commit none).
# Needs chromium (apt-get install chromium). MAXCODE: the binary (build/maxcode).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: job-page-screenshot.sh URL|STATE_DIR [OUT.png] [JOB]}
out=${2:-/tmp/job-page.png}
job=${3:-}
maxcode=${MAXCODE:-$PWD/build/maxcode}
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "job-page-screenshot: needs chromium (apt-get install chromium)" >&2; exit 2; }
work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

url=$target
if [ -d "$target" ]; then
  cp "$target/service.sqlite" "$work/service.sqlite"
  [ -d "$target/service.sqlite.d" ] && cp -r "$target/service.sqlite.d" "$work/service.sqlite.d"
  cat > "$work/service.json" <<JSON
{"listen": "127.0.0.1:0", "db": "$work/service.sqlite"}
JSON
  admin=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  MAXCODE_WEBHOOK_SECRET=screenshot MAXCODE_ADMIN_TOKEN=$admin "$maxcode" serve --config "$work/service.json" \
    2> "$work/serve.log" &
  pid=$!
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "job-page-screenshot: the service did not start:" >&2; cat "$work/serve.log" >&2; exit 1; }
  sleep 0.3
  # The dashboard lists jobs newest first, each id linked to its signed page.
  links=$(curl -fsS -H "Authorization: Bearer $admin" "http://127.0.0.1:$port/" |
          grep -o "href='/jobs/[0-9]*?exp=[0-9]*&amp;sig=[0-9a-f]*'" | sed "s/^href='//; s/'\$//; s/&amp;/\\&/")
  if [ -n "$job" ]; then link=$(printf '%s\n' "$links" | grep "^/jobs/$job?" | head -1 || true)
  else link=$(printf '%s\n' "$links" | head -1); fi
  [ -n "$link" ] || { echo "job-page-screenshot: no job ${job:-at all} in $target" >&2; exit 1; }
  url="http://127.0.0.1:$port$link"
fi

"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1100 \
  --user-data-dir="$work/chromium" --screenshot="$out" "$url" 2>/dev/null
echo "$out  ($url)"
