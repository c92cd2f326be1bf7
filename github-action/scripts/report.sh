#!/usr/bin/env bash
# Turns the run's result.json into the step outputs (verdict, speedup, result-dir) and
# puts report.md in the job summary. Runs even when the search failed, to say so.
set -euo pipefail
out=${MAXCODE_OUT:-${RUNNER_TEMP:-/tmp}/maxcode-out}
result="$out/result.json"
if [ ! -f "$result" ]; then
  echo "verdict=failed" >> "$GITHUB_OUTPUT"
  { echo "## maxcode: failed"; echo; echo "The run wrote no result.json; see the optimize step's log."; } >> "$GITHUB_STEP_SUMMARY"
  echo "::error title=maxcode::no result.json in $out"
  exit 1
fi
python3 - "$result" "$GITHUB_OUTPUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w = r.get("winner")
verdict = "failed" if r.get("fatal") else ("winner" if w else "no-winner")
speedup = f"{w['speedup']['median']:.3f}" if w else ""
with open(sys.argv[2], "a") as out:
    out.write(f"verdict={verdict}\nspeedup={speedup}\n")
print(f"maxcode: {verdict}" + (f" {w['id']} {speedup}x" if w else ""))
PY
echo "result-dir=$out" >> "$GITHUB_OUTPUT"
{
  if [ -f "$out/report.md" ]; then cat "$out/report.md"; else echo "(no report.md)"; fi
  echo
} >> "$GITHUB_STEP_SUMMARY"
