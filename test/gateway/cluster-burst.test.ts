/**
 * `npm run chaos`'s cluster scenario at a small size (bench/chaos/cluster-burst.ts): three
 * gateway workers, each a process of its own, on one PostgreSQL; a burst of messages over
 * many channels through all three, one worker SIGKILLed midway: every accepted message is
 * answered exactly once, none twice, none lost, and the dead worker leaves no agent behind.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterBurst } from "../../bench/chaos/cluster-burst.js";
import type { Figure } from "../../bench/chaos/figures.js";
import { type PostgresCluster, startPostgresCluster } from "../helpers/postgres-cluster.js";

const root = mkdtempSync(join(tmpdir(), "rudder-cluster-burst-"));
let postgres: PostgresCluster;
beforeAll(async () => {
  postgres = await startPostgresCluster();
});
afterAll(async () => {
  await postgres?.destroy();
  rmSync(root, { recursive: true, force: true });
});

function missed(figures: Figure[]): string[] {
  return figures
    .filter((each) => each.ok === false)
    .map((each) => `${each.scenario}: ${each.figure} = ${each.value} (goal ${each.goal})`);
}

it("answers every accepted message once across three workers when one is SIGKILLed midway", async () => {
  const figures = await clusterBurst({ root, postgres, channels: 12, perChannel: 4 });
  expect(missed(figures), JSON.stringify(figures)).toEqual([]);
  const accepted = figures.find((each) => each.figure === "accepted (202)")?.value;
  // Posts go only to live workers, so nearly all are accepted (one in flight at the kill may not be).
  expect(accepted).toBeGreaterThanOrEqual(44);
}, 300_000);
