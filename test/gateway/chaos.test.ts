/**
 * `npm run chaos`'s fault scenarios at a small size (bench/chaos/): the same code, the same
 * goals. The other scenarios of the table have their tests beside this one: http-fuzz,
 * http-limits (slow clients, SSE caps and floods), failures (a line over the cap), long-reply.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import type { Figure } from "../../bench/chaos/figures.js";
import { restarts } from "../../bench/chaos/restarts.js";
import { agentKilledMidTool, toolOutputFlood } from "../../bench/chaos/rudder-agents.js";

const root = mkdtempSync(join(tmpdir(), "rudder-chaos-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function missed(figures: Figure[]): string[] {
  return figures
    .filter((each) => each.ok === false)
    .map((each) => `${each.scenario}: ${each.figure} = ${each.value} (goal ${each.goal})`);
}

it("loses no message and answers none twice across gateway SIGKILLs and restarts", async () => {
  const figures = await restarts({ root, messages: 20, channels: 3, kills: 2 });
  expect(missed(figures)).toEqual([]);
  const accepted = figures.find((each) => each.figure === "accepted (202)")?.value;
  expect(accepted).toBeGreaterThanOrEqual(15);
}, 180_000);

it("an agent SIGKILLed mid-tool leaves no process and no late effect, and the model is told", async () => {
  expect(missed(await agentKilledMidTool(root))).toEqual([]);
}, 180_000);

it("a tool's output flood ends in an answered turn", async () => {
  const figures = await toolOutputFlood(root, 10);
  expect(missed(figures)).toEqual([]);
  expect(figures.find((each) => each.figure === "the message")?.value).toBe("answered");
}, 180_000);
