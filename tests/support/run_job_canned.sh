#!/bin/sh
# A quick job for the service's chaos test: instead of searching, it hands back a result
# directory of a real `maxcode optimize` run on the same code ($MAXCODE_CANNED_RESULT),
# re-stamped with the job's commit, after a random pause of up to $MAXCODE_CANNED_SLEEP
# seconds (so that kills land while jobs run). Called as `--job FILE --out DIR`.
set -eu
job=$2
out=$4
commit=$(jq -r .ref "$job")
sleep "$(awk -v m="${MAXCODE_CANNED_SLEEP:-1}" 'BEGIN { srand(); printf "%.2f", rand() * m }')"
mkdir -p "$out/targets/histogram"
cp "$MAXCODE_CANNED_RESULT/patch.diff" "$out/targets/histogram/"
jq --arg c "$commit" '.repository.commit = $c' "$MAXCODE_CANNED_RESULT/result.json" > "$out/targets/histogram/result.json"
echo '{"targets": ["histogram"]}' > "$out/job.json"
