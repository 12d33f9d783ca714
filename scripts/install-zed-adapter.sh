#!/usr/bin/env bash
# Installs Zed's ACP adapter for Claude Code (@zed-industries/claude-code-acp, what Zed,
# JetBrains and Neovim plugins run) into .cache/zed-adapter/ for the tests that drive rudder
# through it (CLAUDE_CODE_EXECUTABLE points it at rudder or at the real Claude Code). Not a
# dependency of the package. Optional dependencies are left out: the Agent SDK it uses would
# pull a native Claude Code binary the tests never run. Idempotent and quiet.
#   --print-path   print the path of the adapter's entry script (installing first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/cache-install.sh

version="0.16.2"
prefix=".cache/zed-adapter"
package="$prefix/node_modules/@zed-industries/claude-code-acp"
entry="$package/dist/index.js"

if [ ! -f "$entry" ] || [ "$(cached_version "$package/package.json")" != "$version" ]; then
  install_into_cache install-zed-adapter "$prefix" "@zed-industries/claude-code-acp@$version" \
    "$entry" --omit=optional
fi

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$entry"
fi
