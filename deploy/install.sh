#!/bin/sh
# Installs an unpacked Agent Telemetry release (scripts/release.ts) on this host, offline:
#   - the program, its Deno runtime and npm packages into PREFIX (root-owned, read-only to others),
#   - a system user (no login, no home) and its data directory, mode 0700,
#   - the configuration directory (root:USER, 0750) for tls.crt, tls.key and an optional env file,
#   - the systemd unit, with these paths and user written into it.
# Running it again upgrades in place and changes nothing else (data and configuration are kept).
set -eu

prefix=/opt/agent-telemetry
data=/var/lib/agent-telemetry
config=/etc/agent-telemetry
unit_dir=/etc/systemd/system
user=agent-telemetry

usage() {
  cat <<EOF
Usage: install.sh [--prefix DIR] [--data DIR] [--config-dir DIR] [--unit-dir DIR] [--user NAME]

  --prefix DIR      where the release goes (default $prefix)
  --data DIR        the service's data directory, created 0700 (default $data)
  --config-dir DIR  TLS files and the optional env file (default $config)
  --unit-dir DIR    where agent-telemetry.service goes (default $unit_dir)
  --user NAME       the system user the service runs as, created when missing (default $user)
EOF
}

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --prefix | --data | --config-dir | --unit-dir | --user)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "install.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --prefix) prefix=$2 ;;
        --data) data=$2 ;;
        --config-dir) config=$2 ;;
        --unit-dir) unit_dir=$2 ;;
        --user) user=$2 ;;
      esac
      shift 2 ;;
    *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
for dir in "$prefix" "$data" "$config" "$unit_dir"; do
  case "$dir" in /*) ;; *) echo "install.sh: $dir is not an absolute path" >&2; exit 2 ;; esac
done

[ "$(id -u)" = 0 ] || fail "run as root: it creates a system user and root-owned files"
release=$(dirname "$(readlink -f "$0")")
[ -x "$release/runtime/deno" ] && [ -f "$release/app/main.ts" ] && [ -x "$release/bin/agent-telemetry" ] ||
  fail "$release is not an unpacked release (no runtime/deno, app/main.ts or bin/agent-telemetry)"

# The user: a system account that cannot log in and has no home.
if ! getent passwd "$user" >/dev/null; then
  nologin=$(command -v nologin || echo /usr/sbin/nologin)
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell "$nologin" "$user"
  echo "created system user $user"
fi
group=$(id -gn "$user")

# The program: copied beside the old one, then each part swapped in, so a failed copy changes
# nothing and a running service keeps the files it has open.
mkdir -p "$prefix"
chown root:root "$prefix"
chmod 0755 "$prefix"
if [ "$release" != "$prefix" ]; then
  stage=$(mktemp -d "$prefix/.install.XXXXXX")
  trap 'rm -rf "$stage"' EXIT
  parts="bin runtime app systemd install.sh release.json"
  for part in $parts; do cp -RP "$release/$part" "$stage/$part"; done
  chown -R root:root "$stage"
  chmod -R u=rwX,go=rX "$stage"
  for part in $parts; do
    if [ -e "$prefix/$part" ] || [ -L "$prefix/$part" ]; then mv "$prefix/$part" "$stage/old-$part"; fi
    mv "$stage/$part" "$prefix/$part"
  done
fi

# The data directory: only the service user may read it (keys.db holds key hashes).
mkdir -p "$data"
chown "$user:$group" "$data"
chmod 0700 "$data"

# The configuration directory: readable by the service's group, written by root.
mkdir -p "$config"
chown "root:$group" "$config"
chmod 0750 "$config"

# The unit, with this installation's paths and user.
case "$data" in
  /var/lib/?*) state="StateDirectory=${data#/var/lib/}" ;;
  *) state="" ;;
esac
mkdir -p "$unit_dir"
unit="$unit_dir/agent-telemetry.service"
sed -e "s|/opt/agent-telemetry/|$prefix/|g" \
  -e "s|/var/lib/agent-telemetry|$data|g" \
  -e "s|/etc/agent-telemetry/|$config/|g" \
  -e "s|^User=.*|User=$user|" -e "s|^Group=.*|Group=$group|" \
  -e "s|^StateDirectory=.*|$state|" \
  "$prefix/systemd/agent-telemetry.service" >"$unit.tmp"
[ -n "$state" ] || sed -i -e '/^StateDirectoryMode=/d' "$unit.tmp"
chmod 0644 "$unit.tmp"
mv "$unit.tmp" "$unit"

if [ -d /run/systemd/system ] && [ "$unit_dir" = /etc/systemd/system ] && command -v systemctl >/dev/null; then
  systemctl daemon-reload
fi

cat <<EOF
installed $(sed -n 's/.*"version": "\(.*\)".*/agent-telemetry \1/p' "$prefix/release.json") in $prefix
  data:    $data (owner $user, 0700)
  config:  $config (put tls.crt and tls.key here, readable by group $group)
  unit:    $unit
next:
  systemctl enable --now agent-telemetry
  sudo -u $user $prefix/bin/agent-telemetry org create --name NAME --data $data
EOF
