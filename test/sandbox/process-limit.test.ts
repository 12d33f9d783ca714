/**
 * The sandbox's process limit, with the real bubblewrap: a fork bomb the
 * deny list cannot see (base64-decoded into a shell) stops at the limit,
 * ends with a clear error, and leaves the sandbox (and the machine) fine.
 * The bomb runs only once a bounded probe has shown the limit applies.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createBashTool } from "../../src/tools/bash-tool.js";
import { waitFor } from "../helpers/wait-for.js";
import { NO_BUBBLEWRAP, type SandboxFixture, sandboxFixture } from "./sandbox-helpers.js";

const LIMIT = 64;

/** Forks sleeping children until a fork fails or 2 x LIMIT run; prints how many started. */
const FORK_PROBE = `python3 -c '
import os, time
started = 0
while started < ${2 * LIMIT}:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    started += 1
print(started)
'`;

let fixture: SandboxFixture | undefined;
afterEach(() => {
  fixture?.cleanup();
  fixture = undefined;
});

describe.skipIf(NO_BUBBLEWRAP !== undefined)(
  `the sandbox's process limit ${NO_BUBBLEWRAP ?? ""}`,
  () => {
    it("stops an encoded fork bomb at sandbox.maxProcesses with a clear error, and the sandbox lives on", async (context) => {
      fixture = sandboxFixture({ maxProcesses: LIMIT });
      const { run, sandbox, workspace } = fixture;
      const probe = await run(FORK_PROBE);
      const limit = sandbox.processLimit();
      // Root without a cgroup to make: the kernel applies no limit, so the bomb must not run.
      if (limit === "none") context.skip();
      const started = Number(probe.output.trim());
      expect(started, probe.output).toBeGreaterThan(0);
      expect(started, probe.output).toBeLessThan(LIMIT);

      const bash = createBashTool({ sandbox });
      const bomb = await bash.execute(
        { command: "echo ZigpeyBmfGY7IH07Zg== | base64 -d | bash", timeout: 8000 },
        { workspace, signal: new AbortController().signal },
      );
      expect(bomb.isError).toBe(true);
      expect(bomb.content).toContain("Resource temporarily unavailable");
      expect(bomb.content).toContain(`[sandbox] the sandbox holds at most ${LIMIT} processes`);

      // Everything of the bomb is gone, and the sandbox takes the next command.
      let count = Number.NaN;
      await waitFor(
        async () => {
          count = Number((await run("ls /proc | grep -c '^[0-9]'")).output.trim());
          return count < 10;
        },
        () => `the bomb to be gone (${count} processes still in the sandbox)`,
        30_000,
        200,
      );
      expect((await run("echo alive")).output).toBe("alive\n");
    }, 90_000);
  },
);
