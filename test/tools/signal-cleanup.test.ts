import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { fixturePath } from "../helpers/fixtures.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";

const fixture = fixturePath("signal-cleanup.ts");
const cleanup: (() => void)[] = [];

afterEach(() => {
  for (const step of cleanup.splice(0)) step();
});

async function startFixture(
  ...args: string[]
): Promise<{ child: ReturnType<typeof spawn>; sleeper: number }> {
  const child = spawn(process.execPath, ["--import", "tsx", fixture, ...args], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr.resume();
  cleanup.push(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {}
  });
  const sleeper = await new Promise<number>((resolve, reject) => {
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = /pid=(\d+)/.exec(text);
      if (match) resolve(Number(match[1]));
    });
    child.on("close", () => {
      const match = /pid=(\d+)/.exec(text);
      if (match) resolve(Number(match[1]));
      else reject(new Error("fixture exited early"));
    });
  });
  cleanup.push(() => {
    try {
      process.kill(sleeper, "SIGKILL");
    } catch {}
  });
  return { child, sleeper };
}

describe("installSignalCleanup", () => {
  for (const [signal, status] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    it(`kills every process group on ${signal} and exits ${status}`, async () => {
      const { child, sleeper } = await startFixture();
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      child.kill(signal);
      expect(await exited).toBe(status);
      await waitFor(() => !isAlive(sleeper));
    });
  }

  it("kills every process group when rudder exits on its own", async () => {
    const { child, sleeper } = await startFixture("exit");
    if (child.exitCode === null) await new Promise((resolve) => child.on("exit", resolve));
    expect(child.exitCode).toBe(3);
    await waitFor(() => !isAlive(sleeper));
  });
});
