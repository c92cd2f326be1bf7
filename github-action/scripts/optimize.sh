#!/usr/bin/env bash
# Runs the search: `maxcode optimize` on the checked-out repository (the job's working
# directory) into $RUNNER_TEMP/maxcode-out. (`maxcode run`, issue 13, will replace this
# and the delivery step with one command that also profiles when no function is given.)
set -euo pipefail
error() { echo "::error title=maxcode::$*"; echo "maxcode: $*" >&2; exit 1; }
bin=${MAXCODE_BIN:?MAXCODE_BIN is not set: the install step did not run}
config=${MAXCODE_CONFIG:-.maxcode.json}
[ -f "$config" ] || error "config: $config does not exist in $(pwd)"
out="${RUNNER_TEMP:-/tmp}/maxcode-out"
rm -rf "$out"

# LLM keys: each named variable must be set (its value is never printed).
IFS=', ' read -r -a key_names <<< "${MAXCODE_LLM_KEY_SECRETS:-}"
for name in "${key_names[@]}"; do
  [ -n "$name" ] || continue
  [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || error "llm-key-secrets: '$name' is not a variable name"
  [ -n "${!name:-}" ] || error "llm-key-secrets: $name is empty; map the secret into the step's env (env: $name: \${{ secrets.$name }})"
done

# An endpoint given to the action replaces the config's base_url for every LLM role.
if [ -n "${MAXCODE_LLM_BASE_URL:-}" ]; then
  derived="${RUNNER_TEMP:-/tmp}/maxcode-config.json"
  python3 - "$config" "$derived" "$MAXCODE_LLM_BASE_URL" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
llm = c.get("llm") or {}
if not llm:
    sys.exit(f"maxcode: llm-endpoint given but {sys.argv[1]} has no llm section")
for role in llm.values():
    if isinstance(role, dict) and role.get("provider") in ("openai", "anthropic"):
        role["base_url"] = sys.argv[3]
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
  config="$derived"
fi

# A comment started the run: its command is the App's `/maxcode optimize [FUNCTION]
# [--policy P]`, read by maxcode's own parser. The workflow's inputs, where set, win.
if [ "${GITHUB_EVENT_NAME:-}" = issue_comment ] && [ -n "${GITHUB_EVENT_PATH:-}" ]; then
  body=$(python3 -c 'import json,sys; print((json.load(open(sys.argv[1])).get("comment") or {}).get("body") or "")' "$GITHUB_EVENT_PATH")
  status=0
  parsed=$(printf '%s' "$body" | "$bin" comment-command 2>"${RUNNER_TEMP:-/tmp}/maxcode-command.err") || status=$?
  [ "$status" -eq 0 ] || error "the comment's command: $(cat "${RUNNER_TEMP:-/tmp}/maxcode-command.err" | sed 's/^maxcode comment-command: //')"
  kind=$(printf '%s\n' "$parsed" | sed -n 's/^kind=//p')
  [ "$kind" = optimize ] || error "/maxcode $kind is the App's command; the Action runs /maxcode optimize [function] [--policy P]"
  [ -n "${MAXCODE_FUNCTION:-}" ] || MAXCODE_FUNCTION=$(printf '%s\n' "$parsed" | sed -n 's/^function=//p')
  [ -n "${MAXCODE_POLICY:-}" ] || MAXCODE_POLICY=$(printf '%s\n' "$parsed" | sed -n 's/^policy=//p')
fi

args=(optimize . --config "$config" --out "$out")
[ -z "${MAXCODE_FUNCTION:-}" ] || args+=(--function "$MAXCODE_FUNCTION")
[ -z "${MAXCODE_POLICY:-}" ] || args+=(--policy "$MAXCODE_POLICY")
if [ -n "${MAXCODE_BUDGET:-}" ]; then
  [[ "$MAXCODE_BUDGET" =~ ^[1-9][0-9]*$ ]] || error "budget: '$MAXCODE_BUDGET' is not a positive number of evaluations"
  args+=(--max-evaluations "$MAXCODE_BUDGET")
fi
echo "out=$out" >> "$GITHUB_OUTPUT"
echo "MAXCODE_OUT=$out" >> "$GITHUB_ENV"
echo "maxcode ${args[*]}"
"$bin" "${args[@]}"
