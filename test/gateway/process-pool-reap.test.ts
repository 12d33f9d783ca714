/**
 * A kept agent process taken for a turn is not idle, even before anything is sent to it (its
 * start may wait in the agent cap's line): the registry's reaper must not stop it meanwhile,
 * or the turn would start an agent the registry no longer counts.
 */
import { performance } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { RegistryProcessPool } from "../../src/gateway/agents/process-pool.js";

let pool: RegistryProcessPool | undefined;

afterEach(async () => {
  await pool?.registry.close();
});

describe("RegistryProcessPool and the reaper", () => {
  it("does not reap a kept process a turn has just taken, and reaps it once idle again", async () => {
    pool = new RegistryProcessPool({
      maxLive: 2,
      idleMinutes: 1,
      // Never spawned: nothing is sent to these processes.
      processOptions: { claudeBin: "/nonexistent/claude" },
      logger: () => {},
    });
    const first = pool.acquire("a", null);
    expect(first?.oneShot).toBe(false);
    const kept = pool.registry.get("a");
    if (first === null || kept === null) throw new Error("no process");
    expect(kept).toBe(first.process);
    // Its last turn ended two minutes ago: idle past the one minute the reaper allows.
    kept.lastActive = performance.now() - 2 * 60_000;
    const taken = pool.acquire("a", null);
    expect(taken?.process).toBe(first.process);
    expect(await pool.registry.reapOnce()).toBe(0);
    expect(pool.registry.has("a")).toBe(true);

    kept.lastActive = performance.now() - 2 * 60_000;
    expect(await pool.registry.reapOnce()).toBe(1);
    expect(pool.registry.has("a")).toBe(false);
  });
});
