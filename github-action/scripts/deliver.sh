#!/usr/bin/env bash
# Delivers a winner: `maxcode pr` (a branch and a pull request; docs/delivery.md) or a
# comment with the report on the issue or PR whose /maxcode comment started the run.
# GITHUB_TOKEN: use an App token for `pr`, since PRs opened with the workflow's own
# token start no CI.
set -euo pipefail
error() { echo "::error title=maxcode::$*"; echo "maxcode: $*" >&2; exit 1; }
bin=${MAXCODE_BIN:?MAXCODE_BIN is not set}
out=${MAXCODE_OUT:?MAXCODE_OUT is not set}
repo=${GITHUB_REPOSITORY:?}
api=${GITHUB_API_URL:-https://api.github.com}
[ -n "${GITHUB_TOKEN:-}" ] || error "github-token is empty"
case "${MAXCODE_DELIVERY:?}" in
  pr)
    args=(pr --result "$out" --repo "$repo" --api-url "$api")
    [ -z "${MAXCODE_GIT_URL:-}" ] || args+=(--git-url "$MAXCODE_GIT_URL")
    line=$("$bin" "${args[@]}" | tail -1)
    echo "maxcode pr: $line"
    url=$(grep -oE 'https?://[^ ]+' <<<"$line" | tail -1 || true)
    echo "pr-url=$url" >> "$GITHUB_OUTPUT"
    { echo; echo "**Delivered:** $line"; } >> "$GITHUB_STEP_SUMMARY"
    ;;
  comment)
    number=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print((e.get("issue") or e.get("pull_request") or {}).get("number", ""))' "${GITHUB_EVENT_PATH:?}")
    [ -n "$number" ] || error "delivery comment: the event ($GITHUB_EVENT_NAME) has no issue or pull request to comment on"
    body=$(python3 -c 'import json,sys; print(json.dumps({"body": open(sys.argv[1]).read()}))' "$out/report.md")
    url=$(curl -sS --fail-with-body -X POST -H "Authorization: Bearer $GITHUB_TOKEN" \
            -H "Accept: application/vnd.github+json" -H "X-GitHub-Api-Version: 2022-11-28" \
            -H "Content-Type: application/json" -H "User-Agent: maxcode-action" \
            "$api/repos/$repo/issues/$number/comments" --data-binary "$body" \
          | python3 -c 'import json,sys; print(json.load(sys.stdin)["html_url"])')
    echo "comment-url=$url" >> "$GITHUB_OUTPUT"
    { echo; echo "**Delivered:** comment $url"; } >> "$GITHUB_STEP_SUMMARY"
    ;;
esac
