#!/usr/bin/env bash
# Installs @modelcontextprotocol/server-everything (the MCP reference server with a tiny-image
# tool, audio, errors and a roots tool) into .cache/mcp-everything/ for the MCP fidelity tests.
# Not a dependency of the package. Idempotent and quiet.
#   --print-path   print the path of the server's entry script (installing first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."

version="2026.8.31"
prefix=".cache/mcp-everything"
package="$prefix/node_modules/@modelcontextprotocol/server-everything"
manifest="$package/package.json"

installed_version() {
  [ -f "$manifest" ] || return 0
  node -e 'process.stdout.write(require(require("path").resolve(process.argv[1])).version)' "$manifest"
}

entry_of() {
  node -e 'const p=require(require("path").resolve(process.argv[1])); const b=typeof p.bin==="string"?p.bin:Object.values(p.bin)[0]; process.stdout.write(require("path").join(process.argv[2], b))' "$manifest" "$package"
}

if [ ! -f "$manifest" ] || [ "$(installed_version)" != "$version" ]; then
  echo "install-mcp-everything: installing @modelcontextprotocol/server-everything@$version into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  printf '{"name":"mcp-everything-cache","private":true}\n' >"$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
    "@modelcontextprotocol/server-everything@$version" >/dev/null
  [ -f "$manifest" ] || { echo "install-mcp-everything: $manifest missing after install" >&2; exit 1; }
fi

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$(entry_of)"
fi
