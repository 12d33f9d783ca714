#!/usr/bin/env bash
# Installs the Claude Agent SDK for TypeScript into .cache/agent-sdk/ for the test that drives
# rudder with it. Not a dependency of the package: its default install pulls a ~380 MB native
# Claude Code binary (an optional dependency) that the test never runs, because it points the
# SDK at rudder. Idempotent and quiet.
#   --print-path   print the path of the SDK's entry module (installing first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/cache-install.sh

version="0.3.332"
prefix=".cache/agent-sdk"
entry="$prefix/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs"
manifest="$prefix/node_modules/@anthropic-ai/claude-agent-sdk/package.json"

if [ ! -f "$entry" ] || [ "$(cached_version "$manifest")" != "$version" ]; then
  install_into_cache install-agent-sdk "$prefix" "@anthropic-ai/claude-agent-sdk@$version" \
    "$entry" --omit=optional
fi

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$entry"
fi
