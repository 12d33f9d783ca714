#!/usr/bin/env bash
# Installs what the test suite needs beyond npm packages, so that
# `npm ci && npm test` works on a fresh Debian machine:
#   - Debian packages: ripgrep (glob bench reference), tmux (terminal test),
#     chromium (browser test), bubblewrap (the bash tool's sandbox), postgresql (the
#     PostgreSQL store's tests start a throwaway server from its binaries,
#     test/helpers/postgres-cluster.ts);
#   - the pinned Claude Code CLI and the Claude Agent SDK, into .cache/ (never package
#     dependencies: each would pull a ~380 MB native binary into every install), and the MCP
#     reference server (server-everything), Zed's ACP adapter for Claude Code and libraries
#     built for Claude Code (ai-sdk-provider-claude-code, @goodfoot/claude-code-hooks) beside them;
#   - Debian's nginx binary, unpacked into .cache/nginx/ (not installed: that would start a
#     system nginx), for the test of the README's reverse-proxy configuration.
# Idempotent: does nothing when everything is already present.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
# The server binaries live in /usr/lib/postgresql/<version>/bin, not on PATH.
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || missing+=(postgresql)

if [ "${#missing[@]}" -gt 0 ]; then
  echo "ensure-test-deps: installing Debian packages: ${missing[*]}" >&2
  if [ "$(id -u)" = "0" ]; then sudo_cmd=(); else sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The installs are independent (each its own folder of .cache/) and mostly wait on the registry:
# side by side they take about the longest one's time instead of the sum (a fresh clone at load
# ~20: 159 s one after another, 103 s side by side). Fails, after all have ended, when any failed.
installs=(claude-code agent-sdk mcp-everything zed-adapter host-libraries nginx)
pids=()
for name in "${installs[@]}"; do
  bash "scripts/install-$name.sh" &
  pids+=($!)
done
failed=()
for index in "${!pids[@]}"; do
  wait "${pids[$index]}" || failed+=("install-${installs[$index]}.sh")
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "ensure-test-deps: failed: ${failed[*]}" >&2
  exit 1
fi
