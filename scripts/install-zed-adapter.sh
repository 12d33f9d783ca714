#!/usr/bin/env bash
# Installs Zed's ACP adapter for Claude Code (@zed-industries/claude-code-acp, what Zed,
# JetBrains and Neovim plugins run) into .cache/zed-adapter/ for the tests that drive rudder
# through it (CLAUDE_CODE_EXECUTABLE points it at rudder or at the real Claude Code). Not a
# dependency of the package. Optional dependencies are left out: the Agent SDK it uses would
# pull a native Claude Code binary the tests never run. Idempotent and quiet.
#   --print-path   print the path of the adapter's entry script (installing first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."

version="0.16.2"
prefix=".cache/zed-adapter"
package="$prefix/node_modules/@zed-industries/claude-code-acp"
entry="$package/dist/index.js"

installed_version() {
  [ -f "$package/package.json" ] || return 0
  node -e 'process.stdout.write(require(require("path").resolve(process.argv[1])).version)' \
    "$package/package.json"
}

if [ ! -f "$entry" ] || [ "$(installed_version)" != "$version" ]; then
  echo "install-zed-adapter: installing @zed-industries/claude-code-acp@$version into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  printf '{"name":"zed-adapter-cache","private":true}\n' >"$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
    --omit=optional "@zed-industries/claude-code-acp@$version" >/dev/null
  [ -f "$entry" ] || { echo "install-zed-adapter: $entry missing after install" >&2; exit 1; }
fi

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$entry"
fi
