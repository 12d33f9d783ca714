#!/usr/bin/env bash
# Installs @modelcontextprotocol/server-everything (the MCP reference server with a tiny-image
# tool, audio, errors and a roots tool) into .cache/mcp-everything/ for the MCP fidelity tests.
# Not a dependency of the package. Idempotent and quiet.
#   --print-path   print the path of the server's entry script (installing first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/cache-install.sh

version="2026.8.31"
prefix=".cache/mcp-everything"
package="$prefix/node_modules/@modelcontextprotocol/server-everything"
manifest="$package/package.json"

entry_of() {
  node -e 'const p=require(require("path").resolve(process.argv[1])); const b=typeof p.bin==="string"?p.bin:Object.values(p.bin)[0]; process.stdout.write(require("path").join(process.argv[2], b))' "$manifest" "$package"
}

if [ ! -f "$manifest" ] || [ "$(cached_version "$manifest")" != "$version" ]; then
  install_into_cache install-mcp-everything "$prefix" \
    "@modelcontextprotocol/server-everything@$version" "$manifest"
fi

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$(entry_of)"
fi
