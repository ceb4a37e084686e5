#!/usr/bin/env bash
# redmine-down.sh: stop the Redmine that scripts/redmine-up.sh started.
#   --purge   also remove the packages, the database and every file redmine-up.sh created,
#             so the next redmine-up.sh starts from nothing.
# Needs root; re-execs with sudo if not. Safe to run when nothing is running.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "redmine-down: needs root (or sudo)" >&2; exit 1; }
  exec sudo -E -n bash "$0" "$@"
fi

repo="$(cd "$(dirname "$0")/.." && pwd)"
state="${REDMINE_STATE_DIR:-/var/tmp/redmine-ci}"
env_file="${REDMINE_ENV_FILE:-$repo/.redmine/env}"
pid_file="$state/server.pid"
say() { printf '[redmine-down] %s\n' "$*" >&2; }

if [ -s "$pid_file" ]; then
  pid="$(cat "$pid_file")"
  if kill -0 "$pid" 2>/dev/null; then
    # redmine-up.sh started the server with setsid, so its pid is also its process group id:
    # signal the group to stop bundler's children too.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "pid $pid did not stop on TERM; sending KILL"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
    say "stopped Redmine (pid $pid)"
  else
    say "Redmine pid $pid was not running"
  fi
  rm -f "$pid_file"
else
  say "no pid file in $state: nothing to stop"
fi
rm -f /usr/share/redmine/tmp/pids/server.pid "$env_file"

if [ "${1:-}" = "--purge" ]; then
  export DEBIAN_FRONTEND=noninteractive
  rm -rf /usr/share/redmine/Gemfile.local /usr/share/redmine/tmp
  if ! apt-get purge -y -q redmine redmine-sqlite >"$state/purge.log" 2>&1 </dev/null; then
    say "apt-get purge failed; see $state/purge.log"
  fi
  apt-get autoremove --purge -y -q >>"$state/purge.log" 2>&1 </dev/null || true
  rm -rf /etc/redmine /var/lib/redmine /var/log/redmine /var/cache/redmine \
    /var/lib/dbconfig-common/sqlite3/redmine "$state"
  say "purged the Redmine packages and data"
fi
