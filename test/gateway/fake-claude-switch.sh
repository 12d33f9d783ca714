#!/bin/sh
# The fake Claude CLI with its scenario read, at each spawn, from the file named by
# GATEWAY_TEST_SCENARIO_FILE, so a test can change what the next agent process does.
if [ -n "$GATEWAY_TEST_SCENARIO_FILE" ] && [ -f "$GATEWAY_TEST_SCENARIO_FILE" ]; then
  FAKE_CLAUDE_SCENARIO=$(cat "$GATEWAY_TEST_SCENARIO_FILE")
  export FAKE_CLAUDE_SCENARIO
fi
if [ -n "$GATEWAY_TEST_ENV_FILE" ]; then
  echo "RUDDER_MAX_RETRIES=$RUDDER_MAX_RETRIES CLAUDE_CODE_MAX_RETRIES=$CLAUDE_CODE_MAX_RETRIES RUDDER_TELEGRAM_TOKEN=${RUDDER_TELEGRAM_TOKEN-unset}" >>"$GATEWAY_TEST_ENV_FILE"
fi
exec "$(dirname "$0")/../fixtures/fake-claude" "$@"
