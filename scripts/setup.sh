#!/usr/bin/env bash
# Installs everything maxcode needs to build and test on Debian 12, from Debian's packages.
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git ccache bubblewrap util-linux
  libgit2-dev libcpp-httplib-dev nlohmann-json3-dev libssl-dev libsqlite3-dev
  libgtest-dev libgmock-dev libdw-dev libcli11-dev valgrind jq bc python3
  libbenchmark-dev libexpat1-dev lld libpq-dev postgresql
  prometheus
  slurm-wlm munge
  clang-format
  meson
)
# lld: the linker CMakeLists.txt prefers (GNU ld is used where it is missing).
# postgresql: the server the store tests and the two-replica chaos run start in a temp
# dir (tests/support/postgres_server.h; the packaged cluster is not used).
# prometheus: for promtool, which lints the service's /metrics in the tests (its server is
# not used; on a machine with systemd, `systemctl disable --now prometheus` stops it).
# slurm-wlm, munge: the Slurm backend's tests start a one-node cluster of their own on
# loopback (scripts/slurm-local.sh); the packages' own daemons are not used (on a machine
# with systemd, `systemctl disable --now slurmctld slurmd munge` stops them).
# clang-format: scripts/format-check.sh holds the code written since .clang-format
# came to its rules (git clang-format).
# meson: `maxcode init` reads Meson builds; its test configures and builds a small one
# (tests/fixtures/meson-sum).
# The GitHub API tests run a local GitHub in Node.js (tests/github). A node that is
# already there (any source) is used; otherwise Debian's.
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: dependencies present (${#missing[@]} installed now)"
# The local GitHub's npm packages (GitHub's OpenAPI description, ajv, @octokit/fixtures),
# exactly as locked; skipped when node_modules is already newer than the lock file.
github_tests="$(dirname "$0")/../tests/github"
if [ -f "$github_tests/package-lock.json" ] && \
   ! [ "$github_tests/node_modules/.package-lock.json" -nt "$github_tests/package-lock.json" ]; then
  npm ci --prefix "$github_tests" --no-audit --no-fund --loglevel=error
fi
