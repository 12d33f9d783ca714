#!/usr/bin/env bash
# Installs the Claude Agent SDK for TypeScript into .cache/agent-sdk/ for the test that drives
# rudder with it. Not a dependency of the package: its default install pulls a ~380 MB native
# Claude Code binary (an optional dependency) that the test never runs, because it points the
# SDK at rudder. Idempotent and quiet.
#   --print-path   print the path of the SDK's entry module (installing first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."

version="0.3.332"
prefix=".cache/agent-sdk"
entry="$prefix/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs"
manifest="$prefix/node_modules/@anthropic-ai/claude-agent-sdk/package.json"

installed_version() {
  [ -f "$manifest" ] || return 0
  node -e 'process.stdout.write(require(require("path").resolve(process.argv[1])).version)' "$manifest"
}

if [ ! -f "$entry" ] || [ "$(installed_version)" != "$version" ]; then
  echo "install-agent-sdk: installing @anthropic-ai/claude-agent-sdk@$version into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  printf '{"name":"agent-sdk-cache","private":true}\n' >"$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
    --omit=optional "@anthropic-ai/claude-agent-sdk@$version" >/dev/null
  [ -f "$entry" ] || { echo "install-agent-sdk: $entry missing after install" >&2; exit 1; }
fi

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$entry"
fi
