/**
 * For a test file whose libraries set variables of their own in `process.env` (the Claude Agent
 * SDK sets `CLAUDE_AGENT_SDK_VERSION` and others as it starts a query): the environment as it
 * was before the file, put back after it, so that the next file in the same worker does not see
 * them (test/helpers/file-end-cleanup.ts fails a file that leaves it changed).
 */
import { afterAll, beforeAll } from "vitest";

export function restoreEnvironmentAfterAll(): void {
  let before: Record<string, string | undefined> = {};
  beforeAll(() => {
    before = { ...process.env };
  });
  afterAll(() => {
    for (const name of Object.keys(process.env)) {
      if (!(name in before)) delete process.env[name];
    }
    for (const [name, value] of Object.entries(before)) {
      if (value !== undefined) process.env[name] = value;
    }
  });
}
