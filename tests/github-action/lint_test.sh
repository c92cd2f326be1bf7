#!/usr/bin/env bash
# action.yml and the example workflows against their published schemas (SchemaStore's
# github-action and github-workflow), with @action-validator/cli from npm (pinned in
# tests/github/package.json). A broken workflow must be rejected too, so that a linter
# that accepts everything fails this test.
#
# usage: lint_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$(cd "$1" && pwd)
validator="$source_dir/tests/github/node_modules/.bin/action-validator"
[ -x "$validator" ] || { echo "FAIL: $validator is missing: run npm ci --prefix tests/github (scripts/setup.sh does)" >&2; exit 1; }
status=0
for f in "$source_dir/github-action/action.yml" "$source_dir"/github-action/workflows/*.yml; do
  if "$validator" "$f" > /tmp/lint.$$ 2>&1; then
    echo "ok   ${f#$source_dir/}"
  else
    echo "FAIL ${f#$source_dir/}"; cat /tmp/lint.$$; status=1
  fi
done
bad=$(mktemp --suffix=.yml)
printf 'name: broken\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stepz: []\n' > "$bad"
if "$validator" "$bad" > /tmp/lint.$$ 2>&1; then
  echo "FAIL the validator accepted a workflow with an unknown job field"; status=1
else
  echo "ok   a broken workflow is rejected ($(grep -o "Additional property 'stepz' is not allowed" /tmp/lint.$$ | head -1))"
fi
rm -f "$bad" /tmp/lint.$$
exit $status
