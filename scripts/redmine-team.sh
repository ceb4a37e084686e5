#!/usr/bin/env bash
# redmine-team.sh: a team deployment of the Redmine MCP server for tests and trials: two stateless
# replicas of `mcpkit redmine mcp --transport http` behind a real nginx (Debian package) that
# balances them round-robin. Each request carries its sender's own Redmine key.
#
#   scripts/redmine-team.sh up     start (installs nginx with apt-get when missing; needs root for that)
#   scripts/redmine-team.sh down   stop everything this script started (by the pids it wrote)
#
# `up` prints TEAM_URL=http://127.0.0.1:PORT/mcp and the replicas' pids (REPLICA_PIDS=a,b) on stdout.
# Knobs: REDMINE_URL (required), REDMINE_API_KEY (optional: a request without a key then acts as
# that user; unset, such a request gets 401), TEAM_PORT (8100), TEAM_REPLICA_PORTS ("8101 8102"),
# TEAM_STATE_DIR (/var/tmp/redmine-team: config, logs, pids), MCPKIT (the mcpkit command, default
# <repo>/.venv/bin/mcpkit).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
state="${TEAM_STATE_DIR:-/var/tmp/redmine-team}"
port="${TEAM_PORT:-8100}"
read -r -a replica_ports <<<"${TEAM_REPLICA_PORTS:-8101 8102}"
mcpkit="${MCPKIT:-$repo/.venv/bin/mcpkit}"
say() { printf '[redmine-team] %s\n' "$*" >&2; }
fail() {
  say "ERROR: $*"
  exit 1
}

stop_pid_file() {
  local file="$1"
  [ -s "$file" ] || return 0
  local pid
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

down() {
  [ -d "$state" ] || return 0
  for file in "$state"/replica-*.pid "$state"/nginx.pid; do
    [ -e "$file" ] && stop_pid_file "$file"
  done
  say "stopped"
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

up() {
  [ -n "${REDMINE_URL:-}" ] || fail "REDMINE_URL is not set"
  [ -x "$mcpkit" ] || fail "$mcpkit is not executable: run make install or set MCPKIT"
  if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
    [ "$(id -u)" -eq 0 ] || fail "nginx is missing and installing it needs root"
    say "installing nginx (Debian package)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx >"$state-apt.log" 2>&1 ||
      { tail -n 20 "$state-apt.log" >&2; fail "apt-get install nginx failed"; }
  fi
  mkdir -p "$state"
  local nginx_bin
  nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
  down
  mkdir -p "$state/logs" "$state/tmp"

  local pids=()
  for rp in "${replica_ports[@]}"; do
    # setsid: each replica leads its own process group; only these pids are ever signalled.
    setsid "$mcpkit" redmine mcp --transport http --host 127.0.0.1 --port "$rp" \
      >"$state/logs/replica-$rp.log" 2>&1 </dev/null &
    echo $! >"$state/replica-$rp.pid"
    pids+=("$!")
  done

  local servers=""
  for rp in "${replica_ports[@]}"; do servers+="    server 127.0.0.1:$rp max_fails=1 fail_timeout=5s;"$'\n'; done
  cat >"$state/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $state/nginx.pid;
error_log $state/logs/nginx-error.log warn;
events { worker_connections 256; }
http {
  # The default access log format has no request headers, so no key is ever written.
  access_log $state/logs/nginx-access.log;
  client_body_temp_path $state/tmp/body;
  proxy_temp_path $state/tmp/proxy;
  fastcgi_temp_path $state/tmp/fastcgi;
  uwsgi_temp_path $state/tmp/uwsgi;
  scgi_temp_path $state/tmp/scgi;
  upstream mcpkit_redmine {
$servers  }
  server {
    listen 127.0.0.1:$port;
    location /mcp {
      proxy_pass http://mcpkit_redmine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host "localhost:\$server_port"; # replicas bound to loopback accept local Hosts only
      proxy_buffering off;              # answers are server-sent events
      proxy_read_timeout 300s;
      proxy_next_upstream error timeout; # a replica that is gone: the request goes to the other
    }
  }
}
EOF
  setsid "$nginx_bin" -c "$state/nginx.conf" -p "$state" >"$state/logs/nginx-stdout.log" 2>&1 </dev/null &

  local started=$SECONDS
  for p in "$port" "${replica_ports[@]}"; do
    until listening "$p"; do
      [ $((SECONDS - started)) -lt 60 ] || { tail -n 20 "$state"/logs/*.log >&2; fail "port $p did not open"; }
      sleep 0.2
    done
  done
  say "nginx on $port balancing ${replica_ports[*]} (logs: $state/logs)"
  echo "TEAM_URL=http://127.0.0.1:$port/mcp"
  echo "REPLICA_PIDS=$(IFS=,; echo "${pids[*]}")"
}

case "${1:-}" in
up) up ;;
down) down ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
