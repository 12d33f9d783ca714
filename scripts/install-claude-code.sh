#!/usr/bin/env bash
# Installs the pinned Claude Code CLI into .cache/claude-code/ for the integration tests and the
# bench. It is never a dependency of the package (the native binary is about 370 MB).
# Idempotent and quiet: does nothing when the pinned version is already there and runs.
#   --print-path   print the path of the `claude` binary (installing first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/cache-install.sh

version="2.1.328"
prefix=".cache/claude-code"
binary="$prefix/node_modules/.bin/claude"
manifest="$prefix/node_modules/@anthropic-ai/claude-code/package.json"

works() {
  [ -x "$binary" ] && [ "$(cached_version "$manifest")" = "$version" ] &&
    "$binary" --version 2>/dev/null | grep -q "^$version"
}

if ! works; then
  # The CLI ships its native binary in a per-platform optional dependency that a postinstall
  # script links into place, so neither optional dependencies nor scripts may be skipped.
  install_into_cache install-claude-code "$prefix" "@anthropic-ai/claude-code@$version" \
    "$manifest" --include=optional
  if ! works; then
    echo "install-claude-code: $binary does not run after install" >&2
    exit 1
  fi
fi

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$binary"
fi
