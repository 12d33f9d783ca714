/**
 * The `full` lane's files share their worker processes (vitest.config.ts: `isolate: false`, so
 * each file does not pay for a new process and its imports). What one file leaves behind would
 * reach the next, so at the end of every file: the programs it started and did not stop are
 * killed (test/helpers/owned-process.ts), and so are the agents its ClaudeChild processes
 * started in this worker (a gateway or runner a failed test never closed: they would count
 * against a later file's cap; src/claude-cli/terminate.ts tracks them for rudder's own exit);
 * and a file that left the environment changed or fake timers on fails, naming what it left
 * (and it is undone, so that the next file is unharmed).
 */
import { afterAll, beforeAll, vi } from "vitest";
import { killLiveChildren } from "../../src/claude-cli/terminate.js";
import { killOwnedGroups } from "./owned-process.js";

let environment: Record<string, string | undefined> = {};

beforeAll(() => {
  environment = { ...process.env };
});

afterAll(() => {
  killOwnedGroups();
  killLiveChildren();
  const left: string[] = [];
  if (vi.isFakeTimers()) {
    vi.useRealTimers();
    left.push("fake timers on");
  }
  const names = new Set([...Object.keys(environment), ...Object.keys(process.env)]);
  for (const name of names) {
    if (process.env[name] === environment[name]) continue;
    left.push(`process.env.${name} changed`);
    if (environment[name] === undefined) delete process.env[name];
    else process.env[name] = environment[name];
  }
  if (left.length > 0) {
    throw new Error(`this test file left ${left.join(", ")}: undo it after each test`);
  }
});
