/**
 * Budgets reset at midnight in their time zone: a limit reached stays reached until the next
 * midnight there (UTC for one, Pacific/Kiritimati, 14 hours ahead, for the other), read from a
 * real SQLite store with the guard's clock moved instead of waited for.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { GatewayBindings } from "../../src/gateway/bindings/bindings.js";
import { checkGatewayConfig } from "../../src/gateway/bindings/load-gateway-config.js";
import { BudgetGuard } from "../../src/gateway/budgets/budget-guard.js";
import { periodBounds } from "../../src/gateway/budgets/budget-periods.js";
import { SqliteGatewayStore } from "../../src/gateway/store/sqlite/sqlite-store.js";

const folder = mkdtempSync(join(tmpdir(), "rudder-budget-resets-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

it("holds a channel past a daily limit until midnight in each budget's time zone", async () => {
  const store = new SqliteGatewayStore(join(folder, "gateway.db"));
  const loaded = checkGatewayConfig(join(folder, "config.json"), {
    bindings: [
      { name: "far", match: ["far-*"], budget: { dailyUsd: 1, timeZone: "Pacific/Kiritimati" } },
    ],
    budget: { dailyUsd: 1 },
  });
  if (loaded instanceof Error) throw loaded;
  const bindings = new GatewayBindings(loaded, { cwd: folder, engine: "rudder" });
  let now = new Date();
  const guard = new BudgetGuard({ store, bindings, now: () => now });
  const spentAt = new Date();
  const message = await store.insertUserMessage("far-a", "hello", "http");
  await store.settle({
    messageIds: [message.id],
    state: "answered",
    reply: { kind: "reply", text: "hi" },
    turn: {
      result: "hi",
      costUsd: 1.5,
      usage: {},
      durationMs: 1,
      numTurns: 1,
      isError: false,
      subtype: "success",
      sessionId: null,
      binding: "far",
      inputTokens: 10,
      outputTokens: 5,
    },
  });
  expect((await guard.check("far-a"))?.spent).toBe(1.5);

  const utcReset = periodBounds("day", "UTC", spentAt).end;
  const farReset = periodBounds("day", "Pacific/Kiritimati", spentAt).end;
  const [first, second] = utcReset < farReset ? [utcReset, farReset] : [farReset, utcReset];
  now = new Date(first.getTime() - 1);
  expect((await guard.check("far-a"))?.resetsAt).toEqual(second);
  now = first;
  const left = await guard.check("far-a");
  expect(left?.limit.timeZone).toBe(first === utcReset ? "Pacific/Kiritimati" : "UTC");
  expect(left?.resetsAt).toEqual(second);
  now = second;
  expect(await guard.check("far-a")).toBeNull();
  await store.close();
});
