#!/usr/bin/env bash
# A throwaway PostgreSQL for tests and benchmarks, listening on 127.0.0.1 only.
#   scripts/pg_local.sh start DIR [PORT]   initdb (first time) and start; prints the URL
#   scripts/pg_local.sh stop DIR
# Installs Debian's postgresql package when no initdb is found. Durability is
# off (fsync, synchronous_commit): this cluster holds test data only.
set -euo pipefail
action=${1:?start|stop}
dir=${2:?data directory}
port=${3:-55432}

bin=""
for candidate in /usr/lib/postgresql/*/bin; do
  [ -x "$candidate/initdb" ] && bin=$candidate
done
if [ -z "$bin" ] && command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
  bin=$(dirname "$(command -v initdb)")
fi
if [ -z "$bin" ] && [ "$action" = start ]; then
  echo "pg_local: installing postgresql (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
  for candidate in /usr/lib/postgresql/*/bin; do
    [ -x "$candidate/initdb" ] && bin=$candidate
  done
fi
[ -n "$bin" ] || { echo "pg_local: no PostgreSQL binaries found" >&2; exit 1; }

# PostgreSQL refuses to run as root: run it as the postgres user then.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$action" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log"
    fi
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
      "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
      start >&2
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast stop >&2
    ;;
  *)
    echo "usage: $0 start|stop DIR [PORT]" >&2
    exit 2
    ;;
esac
