#!/usr/bin/env bash
# Installs the pinned Claude Code CLI into .cache/claude-code/ for the integration tests and the
# bench. It is never a dependency of the package (the native binary is about 370 MB).
# Idempotent and quiet: does nothing when the pinned version is already there and runs.
#   --print-path   print the path of the `claude` binary (installing first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."

version="2.1.328"
prefix=".cache/claude-code"
binary="$prefix/node_modules/.bin/claude"
manifest="$prefix/node_modules/@anthropic-ai/claude-code/package.json"

installed_version() {
  [ -f "$manifest" ] || return 0
  node -e 'process.stdout.write(require(require("path").resolve(process.argv[1])).version)' "$manifest"
}

works() {
  [ -x "$binary" ] && [ "$(installed_version)" = "$version" ] &&
    "$binary" --version 2>/dev/null | grep -q "^$version"
}

if ! works; then
  echo "install-claude-code: installing @anthropic-ai/claude-code@$version into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  printf '{"name":"claude-code-cache","private":true}\n' >"$prefix/package.json"
  # The CLI ships its native binary in a per-platform optional dependency that a postinstall
  # script links into place, so neither optional dependencies nor scripts may be skipped.
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
    --include=optional "@anthropic-ai/claude-code@$version" >/dev/null
  if ! works; then
    echo "install-claude-code: $binary does not run after install" >&2
    exit 1
  fi
fi

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$binary"
fi
