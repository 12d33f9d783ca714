/**
 * Two PostgreSQL workers count one spend: a turn settled through one worker's store holds back a
 * channel of the other under the gateway's limit.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { GatewayBindings } from "../../../src/gateway/bindings/bindings.js";
import { checkGatewayConfig } from "../../../src/gateway/bindings/load-gateway-config.js";
import { BudgetGuard } from "../../../src/gateway/budgets/budget-guard.js";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { storeAdapters } from "./store-adapters.js";

const { postgres } = storeAdapters();

it("shares the spend between two workers on one database", async () => {
  const url = await (await postgres()).createDatabase();
  const [first, second] = await Promise.all([
    PostgresGatewayStore.open(url),
    PostgresGatewayStore.open(url),
  ]);
  const loaded = checkGatewayConfig(join("/", "config.json"), { budget: { monthlyUsd: 2 } });
  if (loaded instanceof Error) throw loaded;
  const bindings = new GatewayBindings(loaded, { cwd: "/", engine: "rudder" });
  const guard = new BudgetGuard({ store: second!, bindings });
  expect(await guard.check("other")).toBeNull();
  const message = await first!.insertUserMessage("one", "hello", "http");
  await first!.settle({
    messageIds: [message.id],
    state: "answered",
    reply: { kind: "reply", text: "hi" },
    turn: {
      result: "hi",
      costUsd: 2.25,
      usage: {},
      durationMs: 1,
      numTurns: 1,
      isError: false,
      subtype: "success",
      sessionId: null,
      binding: "defaults",
      inputTokens: 10,
      outputTokens: 5,
    },
  });
  const held = await guard.check("other");
  expect(held).toMatchObject({ spent: 2.25, limit: { scope: { kind: "gateway" }, amount: 2 } });
  expect(await second!.spendSince(new Date(0).toISOString())).toEqual([
    { channelId: "one", binding: "defaults", costUsd: 2.25, inputTokens: 10, outputTokens: 5 },
  ]);
  await Promise.all([first!.close(), second!.close()]);
});
