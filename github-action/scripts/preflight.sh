#!/usr/bin/env bash
# The action's first step: refuses runs that must not happen (docs/github-action.md
# "Security"): a pull request from a fork (its code would run on this runner with the
# repository's secrets), a /maxcode comment from someone without write access, a runner
# without a GPU, an unknown delivery.
set -euo pipefail
error() { echo "::error title=maxcode::$*"; echo "maxcode: $*" >&2; exit 1; }

case "${MAXCODE_DELIVERY:-artifact}" in
  pr|comment|artifact) ;;
  *) error "delivery: '${MAXCODE_DELIVERY}' is not one of pr, comment, artifact" ;;
esac

event_name=${GITHUB_EVENT_NAME:?GITHUB_EVENT_NAME is not set: not running under GitHub Actions}
event=${GITHUB_EVENT_PATH:?GITHUB_EVENT_PATH is not set: not running under GitHub Actions}
[ -f "$event" ] || error "GITHUB_EVENT_PATH: $event does not exist"

# One line from the event payload: "fork-pr", "untrusted-comment <who> <association>" or "ok".
check=$(python3 - "$event_name" "$event" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
e = json.load(open(path))
if name in ("pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment"):
    pr = e.get("pull_request") or {}
    head = ((pr.get("head") or {}).get("repo") or {}).get("full_name")
    base = ((pr.get("base") or {}).get("repo") or {}).get("full_name")
    if head is None or head != base:
        print("fork-pr", head or "(deleted fork)")
        sys.exit()
if name == "issue_comment":
    c = e.get("comment") or {}
    assoc = c.get("author_association", "NONE")
    if assoc not in ("OWNER", "MEMBER", "COLLABORATOR"):
        print("untrusted-comment", (c.get("user") or {}).get("login", "?"), assoc)
        sys.exit()
print("ok")
PY
)
case "$check" in
  fork-pr*) error "refusing to run on a pull request from a fork (${check#fork-pr }): its code would run on this self-hosted runner; use the /maxcode comment command or workflow_dispatch instead" ;;
  untrusted-comment*) set -- $check
    error "refusing the /maxcode command of $2 (author_association $3): only OWNER, MEMBER or COLLABORATOR may start a run" ;;
  ok) ;;
  *) error "could not read the event payload $event" ;;
esac

if [ "${MAXCODE_REQUIRE_GPU:-true}" = "true" ]; then
  command -v nvidia-smi >/dev/null 2>&1 \
    || error "no GPU: nvidia-smi is not on PATH (a self-hosted GPU runner is needed; set require-gpu: false for CPU-only projects)"
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [ "${gpus:-0}" -gt 0 ] || error "no GPU: nvidia-smi -L lists none"
  echo "gpus=$gpus" >> "$GITHUB_OUTPUT"
  nvidia-smi -L
fi
echo "maxcode: preflight passed ($event_name)"
