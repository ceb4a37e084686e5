#!/usr/bin/env bash
# redmine-up.sh: install, configure and start a real Redmine (Debian packages, SQLite, WEBrick or Puma)
# for the mcpkit integration tests. Safe to run again: it reuses the packages, the database and a
# server that already answers. Runs without a terminal (CI). Needs root; re-execs with sudo if not.
#
# Writes the connection details to $REDMINE_ENV_FILE (default: <repo>/.redmine/env), which the
# integration tests read, and prints the same lines on stdout:
#   REDMINE_URL, REDMINE_API_KEY (admin), REDMINE_USER_API_KEY (a non-admin user, for 403 tests)
# Everything else (progress, errors) goes to stderr.
#
# Knobs: REDMINE_PORT (3000), REDMINE_STATE_DIR (/var/tmp/redmine-ci), REDMINE_START_TIMEOUT (180),
#        REDMINE_ADMIN_API_KEY (pin the admin key to this value),
#        REDMINE_SERVER (webrick, or puma: the app server production Rails sites run; Debian's
#        puma package, Redmine's Gemfile plus puma in the state dir, so the WEBrick setup is untouched).
# A second server on the same database: REDMINE_SERVER=puma REDMINE_PORT=3001
#   REDMINE_STATE_DIR=/var/tmp/redmine-puma REDMINE_ENV_FILE=.redmine/env-puma scripts/redmine-up.sh
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "redmine-up: needs root (or sudo)" >&2; exit 1; }
  exec sudo -E -n bash "$0" "$@"
fi

repo="$(cd "$(dirname "$0")/.." && pwd)"
bind=127.0.0.1 # loopback only: this Redmine has a well-known admin account
port="${REDMINE_PORT:-3000}"
state="${REDMINE_STATE_DIR:-/var/tmp/redmine-ci}"
env_file="${REDMINE_ENV_FILE:-$repo/.redmine/env}"
start_timeout="${REDMINE_START_TIMEOUT:-180}"
app_server="${REDMINE_SERVER:-webrick}"
case "$app_server" in webrick | puma) ;; *) echo "redmine-up: REDMINE_SERVER must be webrick or puma" >&2; exit 1 ;; esac
url="http://$bind:$port"
app=/usr/share/redmine
export DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 LC_ALL=C.UTF-8
mkdir -p "$state"
log_file="$state/setup.log"

say() { printf '[redmine-up] %s\n' "$*" >&2; }
fail() {
  say "ERROR: $*"
  exit 1
}
# Run a chatty command with its output in the log; show the log's tail only when it fails.
quietly() {
  if ! "$@" >>"$log_file" 2>&1 </dev/null; then
    tail -n 40 "$log_file" >&2
    return 1
  fi
}
installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }
# The bundler version Debian packages (not the newer default gem of the ruby security update,
# which cannot see Debian's gems and makes redmine's postinst fail with GemNotFound).
debian_bundler_version() {
  find /usr/share/rubygems-integration/all/specifications -name 'bundler-*.gemspec' 2>/dev/null |
    sed 's|.*/bundler-||; s|\.gemspec$||' | sort -V | tail -n 1 || true
}

# ---- packages -------------------------------------------------------------------------------------
if ! installed redmine || ! installed redmine-sqlite || ! command -v curl >/dev/null; then
  started=$SECONDS
  bv="$(debian_bundler_version)"
  if [ -n "$bv" ]; then # an earlier run may have left redmine half-configured
    export BUNDLER_VERSION="$bv"
    quietly dpkg --configure -a || true
  fi
  say "apt-get update"
  quietly apt-get update
  say "installing ruby-bundler and curl"
  quietly apt-get install -y --no-install-recommends ruby-bundler curl ca-certificates
  bv="$(debian_bundler_version)"
  [ -n "$bv" ] || fail "Debian's bundler gemspec was not found after installing ruby-bundler"
  export BUNDLER_VERSION="$bv"
  say "installing redmine and redmine-sqlite (BUNDLER_VERSION=$bv)"
  quietly dpkg --configure -a
  quietly apt-get install -y --no-install-recommends redmine redmine-sqlite
  say "packages ready after $((SECONDS - started)) s"
fi
BUNDLER_VERSION="$(debian_bundler_version)"
export BUNDLER_VERSION

# ---- SQLite waits for a lock instead of failing at once ------------------------------------------
# Without a busy timeout, two requests writing at the same moment (parallel tests, two users) make
# Redmine answer 500 "database is locked". A running server picks this up at its next start.
db_yml=/etc/redmine/default/database.yml
if [ -f "$db_yml" ] && ! grep -q '^  timeout:' "$db_yml"; then
  sed -i 's/^  adapter: sqlite3$/  adapter: sqlite3\n  timeout: 15000/' "$db_yml"
fi

# ---- an app server: Redmine's Gemfile has none; webrick is already installed with ruby --------------
[ "$(cat "$app/Gemfile.local" 2>/dev/null)" = "gem 'webrick'" ] || echo "gem 'webrick'" >"$app/Gemfile.local"
install -d -o www-data -g www-data "$app/tmp"
as_redmine() {
  (cd "$app" && exec setpriv --reuid=www-data --regid=www-data --init-groups \
    env HOME=/tmp REDMINE_INSTANCE=default RAILS_ENV=production BUNDLER_VERSION="$BUNDLER_VERSION" "$@")
}
grep -q '^    webrick ' /var/lib/redmine/Gemfile.lock 2>/dev/null || quietly as_redmine bundle install --local --quiet
gemfile_env=()
if [ "$app_server" = puma ]; then
  # WEBrick writes an answer's header and body in two writes without TCP_NODELAY: on a kept-alive
  # connection Nagle then waits for the client's delayed ACK (about 40 ms a request). Puma does not.
  installed puma || quietly apt-get install -y --no-install-recommends puma
  install -d -o www-data -g www-data "$state"
  printf '%s\n' '# Redmine'"'"'s Gemfile plus the app server (written by redmine-up.sh)' \
    'eval_gemfile "/usr/share/redmine/Gemfile"' 'gem "puma"' >"$state/Gemfile"
  chown www-data:www-data "$state/Gemfile"
  gemfile_env=("BUNDLE_GEMFILE=$state/Gemfile")
  grep -q '^    puma ' "$state/Gemfile.lock" 2>/dev/null || quietly as_redmine env "${gemfile_env[@]}" bundle install --local --quiet
fi

# ---- configuration: default data, REST API, admin key, a non-admin user with a key -----------------
ruby_setup='
Redmine::DefaultData::Loader.load("en") if Redmine::DefaultData::Loader.no_data?
Setting.rest_api_enabled = "1" unless Setting.rest_api_enabled?
admin = User.find_by_login("admin")
admin.update_column(:must_change_passwd, false) if admin.must_change_passwd?
pinned = ENV["REDMINE_ADMIN_API_KEY"].to_s
unless pinned.empty?
  token = admin.api_token || Token.create!(user: admin, action: "api")
  token.update_column(:value, pinned)
  admin.reload
end
user = User.find_by_login("mcpkit-member")
unless user
  user = User.new(firstname: "Mcpkit", lastname: "Member", mail: "mcpkit-member@example.invalid")
  user.login = "mcpkit-member"
  user.password = user.password_confirmation = SecureRandom.hex(16)
  user.save!
end
# Custom fields for the tests: one list field taking several values, one plain text field.
unless IssueCustomField.find_by_name("mcpkit-multi")
  IssueCustomField.create!(name: "mcpkit-multi", field_format: "list", possible_values: %w[alpha beta gamma],
                           multiple: true, is_for_all: true, is_filter: true, trackers: Tracker.all)
end
unless IssueCustomField.find_by_name("mcpkit-text")
  IssueCustomField.create!(name: "mcpkit-text", field_format: "string", is_for_all: true, trackers: Tracker.all)
end
# A required field of the Bug tracker only, in no project until a test enables it on its own.
unless IssueCustomField.find_by_name("mcpkit-required")
  IssueCustomField.create!(name: "mcpkit-required", field_format: "list", possible_values: %w[low high],
                           is_required: true, is_for_all: false, trackers: [Tracker.find(1)])
end
# A required field with a default, of the Bug tracker only, in no project until a test enables it.
unless IssueCustomField.find_by_name("mcpkit-defaulted")
  IssueCustomField.create!(name: "mcpkit-defaulted", field_format: "list", possible_values: %w[minor major],
                           default_value: "minor", is_required: true, is_for_all: false, trackers: [Tracker.find(1)])
end
puts "MCPKIT-ADMIN-KEY=#{admin.api_key}"
puts "MCPKIT-USER-KEY=#{user.api_key}"
'
setup_out="$(as_redmine bundle exec rails runner "$ruby_setup" 2>>"$log_file" </dev/null)" || {
  tail -n 40 "$log_file" >&2
  fail "rails runner could not configure Redmine"
}
admin_key="$(printf '%s\n' "$setup_out" | sed -n 's/^MCPKIT-ADMIN-KEY=//p')"
user_key="$(printf '%s\n' "$setup_out" | sed -n 's/^MCPKIT-USER-KEY=//p')"
[ -n "$admin_key" ] && [ -n "$user_key" ] || fail "could not read the API keys from rails runner"

# ---- server -----------------------------------------------------------------------------------------
answers() { curl -fsS -m 5 -o /dev/null -H "X-Redmine-API-Key: $admin_key" "$url/users/current.json" 2>/dev/null; }
if answers; then
  say "already running at $url"
else
  pid_file="$state/server.pid"
  if [ -s "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
    fail "pid $(cat "$pid_file") is alive but $url does not answer; run scripts/redmine-down.sh first"
  fi
  # The server runs as www-data and writes its pid file itself: give it a directory it owns (the state
  # directory is root's), and remove a stale file a killed server left, which Rails would refuse.
  install -d -o www-data -g www-data "$state/pids"
  rm -f "$app/tmp/pids/server.pid" "$state/pids/rails.pid"
  started=$SECONDS
  : >"$state/server.log"
  # setsid: the server leads its own process group, so redmine-down.sh can stop all of it.
  (cd "$app" && exec setsid setpriv --reuid=www-data --regid=www-data --init-groups \
    env HOME=/tmp REDMINE_INSTANCE=default RAILS_ENV=production BUNDLER_VERSION="$BUNDLER_VERSION" "${gemfile_env[@]}" \
    bundle exec rails server -u "$app_server" -b "$bind" -p "$port" -P "$state/pids/rails.pid") >>"$state/server.log" 2>&1 </dev/null &
  echo $! >"$pid_file"
  until answers; do
    kill -0 "$(cat "$pid_file")" 2>/dev/null || {
      tail -n 40 "$state/server.log" >&2
      fail "the Redmine server exited during start-up"
    }
    [ $((SECONDS - started)) -lt "$start_timeout" ] || {
      tail -n 40 "$state/server.log" >&2
      fail "Redmine did not answer within ${start_timeout} s"
    }
    sleep 0.5
  done
  say "ready at $url after $((SECONDS - started)) s (log: $state/server.log)"
fi

# ---- hand the details to the tests ------------------------------------------------------------------
mkdir -p "$(dirname "$env_file")"
umask 077
printf 'REDMINE_URL=%s\nREDMINE_API_KEY=%s\nREDMINE_USER_API_KEY=%s\n' "$url" "$admin_key" "$user_key" >"$env_file.tmp"
mv "$env_file.tmp" "$env_file"
if [ -n "${SUDO_UID:-}" ]; then chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$env_file" "$(dirname "$env_file")" || true; fi
cat "$env_file"
