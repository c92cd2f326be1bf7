#!/bin/sh
# Stands in for `maxcode run --job FILE --out DIR` (issue 13) in the service's tests
# until that command exists: runs `maxcode optimize` on the job's checkout for each of its
# targets (replay candidates from the repository's replay/ folder), writing
# DIR/targets/<function>/ and a small DIR/job.json. $MAXCODE_BIN is the maxcode binary.
set -eu
[ "$1" = --job ] && [ "$3" = --out ] || { echo "usage: $0 --job FILE --out DIR" >&2; exit 2; }
job=$2
out=$4
repo=$(jq -r .repository "$job")
policy=$(jq -r '.policy // "replay"' "$job")
mkdir -p "$out/targets"
status=0
for fn in $(jq -r '.targets // [] | .[]' "$job"); do
  "$MAXCODE_BIN" optimize "$repo" --function "$fn" --policy "$policy" --replay-dir "$repo/replay" \
    --out "$out/targets/$fn" -q || status=$?
done
jq '{schema: "maxcode.job/0-wrapper", targets: (.targets // [])}' "$job" > "$out/job.json"
exit $status
