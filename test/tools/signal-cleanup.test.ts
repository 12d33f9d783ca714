import { afterEach, describe, expect, it } from "vitest";
import { fixturePath } from "../helpers/fixtures.js";
import { type OwnedProcess, outputMatching, startProcess } from "../helpers/owned-process.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";

const fixture = fixturePath("signal-cleanup.ts");
const cleanup: (() => void)[] = [];

afterEach(() => {
  for (const step of cleanup.splice(0)) step();
});

async function startFixture(
  ...args: string[]
): Promise<{ fixture: OwnedProcess; sleeper: number }> {
  const started = startProcess(process.execPath, ["--import", "tsx", fixture, ...args]);
  cleanup.push(() => started.kill());
  const sleeper = Number((await outputMatching(started, /pid=(\d+)/))[1]);
  cleanup.push(() => {
    try {
      process.kill(sleeper, "SIGKILL");
    } catch {}
  });
  return { fixture: started, sleeper };
}

describe("installSignalCleanup", () => {
  for (const [signal, status] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    it(`kills every process group on ${signal} and exits ${status}`, async () => {
      const { fixture: started, sleeper } = await startFixture();
      started.child.kill(signal);
      expect((await started.exited).code).toBe(status);
      await waitFor(() => !isAlive(sleeper));
    });
  }

  it("kills every process group when rudder exits on its own", async () => {
    const { fixture: started, sleeper } = await startFixture("exit");
    expect((await started.exited).code).toBe(3);
    await waitFor(() => !isAlive(sleeper));
  });
});
