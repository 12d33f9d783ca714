/**
 * Where the programs the tests run live: the fixture executables in test/fixtures/ (fakes that
 * are real programs) and the built rudder CLI (`npm run build`).
 */
import { join } from "node:path";

const repositoryRoot = join(import.meta.dirname, "..", "..");

/** A file in test/fixtures/. */
export function fixturePath(name: string): string {
  return join(repositoryRoot, "test", "fixtures", name);
}

/** The fake Claude CLI: prints stream-json per `FAKE_CLAUDE_SCENARIO`, hangs or crashes on cue. */
export const FAKE_CLAUDE = fixturePath("fake-claude");
/** The fake Claude CLI with its scenario read at each spawn from `GATEWAY_TEST_SCENARIO_FILE`. */
export const FAKE_CLAUDE_SWITCH = fixturePath("fake-claude-switch.sh");
/** A stdio MCP server, its behaviour chosen by its arguments. */
export const FAKE_MCP_SERVER = fixturePath("fake-mcp-server.mjs");
/** The built CLI's entry (run it with `process.execPath`). */
export const RUDDER_CLI = join(repositoryRoot, "dist", "cli.js");
/** An executable that runs the built CLI, for hosts that take one binary path. */
export const RUDDER_BIN = fixturePath("rudder-bin");
/** The built agent spawner's entry (run it with `process.execPath`; src/claude-cli/spawner/). */
export const RUDDER_SPAWNER = join(
  repositoryRoot,
  "dist",
  "claude-cli",
  "spawner",
  "spawner-main.js",
);
