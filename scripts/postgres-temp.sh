#!/usr/bin/env bash
# A throwaway PostgreSQL (Debian's postgresql package) for the benchmarks: a cluster in
# DIR listening only on a Unix socket there. Prints the store URL for `maxcode serve
# --store`. PostgreSQL refuses root, so as root it runs as the package's `postgres` user.
# synchronous_commit=off: a commit is not flushed before the answer, as the SQLite store's
# synchronous=NORMAL (a crash of maxcode loses nothing; a crash of the machine may lose
# the last moments). (tests/support/postgres_server.cc does the same for the tests.)
#
#   scripts/postgres-temp.sh start DIR     -> prints postgresql:///maxcode?host=DIR&user=postgres
#   scripts/postgres-temp.sh stop DIR
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?a directory (created)}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "postgres-temp.sh: PostgreSQL is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
as=()
[ "$(id -u)" -ne 0 ] || as=(runuser -u postgres --)
case "$cmd" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" -ne 0 ] || chown postgres: "$dir"
    "${as[@]}" test -w "$dir" ||
      { echo "postgres-temp.sh: the server's user cannot reach $dir (a parent dir is private; use one under /tmp)" >&2; exit 1; }
    "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-k $dir -c listen_addresses='' -c synchronous_commit=off -c max_connections=200" start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    psql_url="postgresql:///postgres?host=$dir&user=postgres"
    "$bin/psql" -q "$psql_url" -c "CREATE DATABASE maxcode" >/dev/null
    echo "postgresql:///maxcode?host=$dir&user=postgres"
    ;;
  stop)
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
    ;;
  *) echo "postgres-temp.sh: start or stop, not '$cmd'" >&2; exit 2 ;;
esac
