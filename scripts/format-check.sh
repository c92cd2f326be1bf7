#!/usr/bin/env bash
# The code format, held by clang-format (.clang-format at the root) on every line of C++
# and CUDA written or changed since the commit that added .clang-format: what
# `git clang-format` would change there is printed and fails the check. Code older than
# that commit is reformatted a file at a time as it is edited (a whole-tree reformat
# would rebuild everything and bury `git blame` for a few thousand lines of wrapping).
#
# Usage: scripts/format-check.sh [BASE]   (default BASE: the commit that added .clang-format)
#        scripts/format-check.sh --fix    rewrite those lines in the working tree instead
# Uncommitted changes count too.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git-clang-format >/dev/null || { echo "format-check: git-clang-format missing (scripts/setup.sh installs clang-format)" >&2; exit 2; }
fix=no
[ "${1:-}" = "--fix" ] && { fix=yes; shift; }
base=${1:-$(git log --diff-filter=A --format=%H -- .clang-format | tail -1)}
if [ -z "$base" ]; then
  echo "format-check: .clang-format is not committed yet; nothing to compare with" >&2
  exit 0
fi
# The commit that added the rules is itself held to them: compare from its parent.
git rev-parse -q --verify "$base^" >/dev/null && base="$base^"
exts=cc,h,cu,cuh,cpp,hpp
if [ $fix = yes ]; then
  git clang-format --quiet --extensions "$exts" "$base" -- runner bot cli tests bench || true
  exit 0
fi
diff=$(git clang-format --diff --extensions "$exts" "$base" -- runner bot cli tests bench 2>&1 || true)
case "$diff" in
  ""|"no modified files to format"|*"clang-format did not modify any files"*)
    echo "format-check: the lines changed since $(git rev-parse --short "$base") follow .clang-format"; exit 0 ;;
esac
echo "$diff"
echo "format-check: the lines above do not follow .clang-format; scripts/format-check.sh --fix rewrites them" >&2
exit 1
