#!/usr/bin/env bash
# browser-up.sh: what the archive web app's browser tests need, installed from the package
# registries the project uses (no browser download of Playwright's own):
#   - Debian's chromium, driven by Playwright for Python with executable_path=/usr/bin/chromium
#     (needs root; re-execs with sudo if not), fonts-noto-cjk so Japanese text renders and
#     fonts-noto-color-emoji so emoji render (not as empty boxes) in pages and screenshots;
#   - axe-core's browser build from npm, unpacked to .third-party/axe-core/axe.min.js, which the
#     accessibility test injects into the page (offline once installed).
# Safe to run again: it installs only what is missing. Progress and errors go to stderr.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
axe_version="${AXE_CORE_VERSION:-4.14.1}"
say() { printf '[browser-up] %s\n' "$*" >&2; }

installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }

if ! installed chromium || ! installed fonts-noto-cjk || ! installed fonts-noto-color-emoji; then
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { say "needs root (or sudo) to install chromium"; exit 1; }
    sudo -n true 2>/dev/null || { say "sudo needs a password; cannot install chromium"; exit 1; }
    as_root=(sudo -E -n)
  else
    as_root=()
  fi
  export DEBIAN_FRONTEND=noninteractive
  say "installing chromium, fonts-noto-cjk and fonts-noto-color-emoji (Debian packages)"
  log="$(mktemp)"
  if ! { "${as_root[@]}" apt-get update && "${as_root[@]}" apt-get install -y --no-install-recommends chromium fonts-noto-cjk fonts-noto-color-emoji; } >"$log" 2>&1 </dev/null; then
    tail -n 30 "$log" >&2
    exit 1
  fi
  rm -f "$log"
fi
command -v chromium >/dev/null || { say "chromium is not on PATH after the install"; exit 1; }

axe_dir="$repo/.third-party/axe-core"
if [ ! -s "$axe_dir/axe.min.js" ] || ! grep -q "\"version\": \"$axe_version\"" "$axe_dir/package.json" 2>/dev/null; then
  command -v npm >/dev/null || { say "npm is needed to fetch axe-core"; exit 1; }
  say "fetching axe-core $axe_version from npm"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "axe-core@$axe_version" >/dev/null && tar xzf "axe-core-$axe_version.tgz")
  mkdir -p "$axe_dir"
  cp "$tmp/package/axe.min.js" "$tmp/package/LICENSE" "$tmp/package/package.json" "$axe_dir/"
  rm -rf "$tmp"
fi
say "ready: $(chromium --version 2>/dev/null || echo chromium), axe-core $axe_version"
