#!/usr/bin/env bash
# Installs libraries that programs built for Claude Code use, for the tests that run them on
# rudder: ai-sdk-provider-claude-code (the AI SDK's provider over the Agent SDK; 3.6 is the
# line for AI SDK 6 on Node 20) and @goodfoot/claude-code-hooks (hooks written in TypeScript,
# compiled by its CLI), into .cache/host-libraries/{ai-sdk,hooks}/. Not dependencies of the
# package. The provider's optional dependencies are left out (the Agent SDK's native Claude
# Code binary); the hooks' are not (esbuild's platform binary). Idempotent and quiet.
#   --print-path   print .cache/host-libraries (installing first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=".cache/host-libraries"
ai_sdk=(ai-sdk-provider-claude-code@3.6.0 ai@6.0.326 zod@4)
hooks=(@goodfoot/claude-code-hooks@1.9.0)

# install <folder> <npm flags...> -- <packages...>
install() {
  local folder="$prefix/$1"
  shift
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  local stamp="$folder/installed.txt"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$*" ]; then return 0; fi
  echo "install-host-libraries: installing $* into $folder" >&2
  rm -rf "$folder"
  mkdir -p "$folder"
  printf '{"name":"host-library","private":true,"type":"module"}\n' >"$folder/package.json"
  (cd "$folder" && npm install --no-audit --no-fund --no-save --loglevel=error \
    ${flags[@]+"${flags[@]}"} "$@" >/dev/null)
  printf '%s' "$*" >"$stamp"
}

# Two folders, so two installs side by side.
install ai-sdk --omit=optional -- "${ai_sdk[@]}" &
ai_sdk_install=$!
install hooks -- "${hooks[@]}" &
hooks_install=$!
installed=0
wait "$ai_sdk_install" || installed=1
wait "$hooks_install" || installed=1
[ "$installed" -eq 0 ] || exit 1

if [ "${1:-}" = "--print-path" ]; then
  echo "$(pwd)/$prefix"
fi
