/**
 * Budgets in a gateway whose agents are rudder (against the fake Messages API, Sonnet's prices):
 * a turn that crosses its channel's daily limit is stopped at its next model call with what it
 * did kept; the channel's next message is answered at once with the limit, the amount and the
 * reset, and nothing is sent to the model; raising the limit in the configuration (a reload)
 * lets it go on; `GET /api/spend` and `/status` report the spend against the limit.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GatewayBindings } from "../../src/gateway/bindings/bindings.js";
import { loadGatewayConfig } from "../../src/gateway/bindings/load-gateway-config.js";
import type { SpendReport } from "../../src/gateway/budgets/spend-report.js";
import { costUsd } from "../../src/model/pricing.js";
import {
  echoFallback,
  type FakeMessagesApi,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import { type ApiMessage, startRudderGateway, type TestGateway } from "./helpers.js";

let api: FakeMessagesApi;
let gateway: TestGateway;
let workspace: string;
let configFile: string;

function writeConfig(dailyUsd: number): void {
  const binding = {
    name: "tight",
    match: ["tight-*"],
    model: "claude-sonnet-4-5",
    budget: { channel: { dailyUsd } },
  };
  writeFileSync(configFile, JSON.stringify({ bindings: [binding] }));
}

beforeAll(async () => {
  api = await startFakeMessagesApi({ fallback: echoFallback });
  workspace = mkdtempSync(join(tmpdir(), "rudder-budgets-"));
  configFile = join(workspace, "config.json");
  // A tenth of a cent: the first model call of a turn (thousands of tokens) crosses it.
  writeConfig(0.001);
  const loaded = await loadGatewayConfig(configFile);
  if (loaded instanceof Error) throw loaded;
  gateway = await startRudderGateway({
    prefix: "budgets",
    apiUrl: api.url,
    workspace,
    bindings: new GatewayBindings(loaded, { cwd: workspace, engine: "rudder" }),
    priceUsage: costUsd,
    engineName: "rudder",
  });
});

afterAll(async () => {
  await gateway?.cleanup();
  await api?.close();
  rmSync(workspace, { recursive: true, force: true });
});

const mainRequests = () => api.requests.filter((request) => request.main).length;

async function settledAs(channelId: string, messageId: string, state: string) {
  return waitFor(
    async () => {
      const messages = await gateway.messages(channelId);
      const message = messages.find((each) => each.id === messageId);
      if (message?.state !== state) return undefined;
      return messages.findLast((each) => each.replyTo === messageId && each.role === "assistant");
    },
    `message ${messageId} ${state}`,
    30_000,
  ) as Promise<ApiMessage>;
}

it("stops a turn that crosses its limit at its next model call, its work kept", async () => {
  api.push(
    { toolUse: { name: "Bash", input: { command: "printf kept > first.txt" } } },
    // biome-ignore lint/suspicious/noThenProperty: the fake API names its delayed step so.
    { delayMs: 1500, then: { toolUse: { name: "Bash", input: { command: "touch second.txt" } } } },
  );
  const posted = await gateway.api<{ id: string }>("POST", "/api/channels/tight-a/messages", {
    text: "write two files",
  });
  const reply = await settledAs("tight-a", posted.body.id, "failed");
  expect(reply.text).toMatch(
    /^Budget reached: the daily limit per channel of binding "tight" is \$0\.0010, and \$0\.\d+ was spent today\. The agent was stopped before its next model call/,
  );
  expect(readFileSync(join(workspace, "first.txt"), "utf8")).toBe("kept");
  expect(existsSync(join(workspace, "second.txt"))).toBe(false);
  // The call after the one that crossed the limit was cut short: no third was made.
  expect(mainRequests()).toBeLessThanOrEqual(2);
});

it("answers a message past the limit at once, sends nothing, and goes on once it is raised", async () => {
  const before = mainRequests();
  const posted = await gateway.api<{ id: string }>("POST", "/api/channels/tight-a/messages", {
    text: "one more thing",
  });
  const held = await settledAs("tight-a", posted.body.id, "deferred");
  expect(held.kind).toBe("fallback");
  expect(held.text).toMatch(/^Budget reached: the daily limit per channel of binding "tight"/);
  expect(held.text).toMatch(
    /Nothing was sent to the agent: your message is kept and goes on when the limit resets at \d{4}-\d\d-\d\d 00:00 UTC/,
  );
  expect(mainRequests()).toBe(before);

  writeConfig(100);
  await gateway.reloadConfig();
  const answer = await settledAs("tight-a", posted.body.id, "answered");
  expect(answer.text).toContain("one more thing");
  expect(mainRequests()).toBeGreaterThan(before);
});

it("reports the spend against each limit", async () => {
  const { body } = await gateway.api<SpendReport>("GET", "/api/spend");
  expect(body.gateway.today.usd).toBeGreaterThan(0.001);
  expect(body.gateway.thisMonth.usd).toBeGreaterThanOrEqual(body.gateway.today.usd);
  expect(body.bindings.find((binding) => binding.name === "tight")?.today.usd).toBe(
    body.gateway.today.usd,
  );
  const channel = body.channels.find((each) => each.channelId === "tight-a");
  expect(channel?.binding).toBe("tight");
  expect(channel?.limits).toEqual([
    expect.objectContaining({
      period: "day",
      unit: "usd",
      level: "tight",
      perChannel: true,
      amount: 100,
      spent: body.gateway.today.usd,
      timeZone: "UTC",
    }),
  ]);
});

it("says the channel's spend in /status", async () => {
  const posted = await gateway.api<{ id: string }>("POST", "/api/channels/tight-a/messages", {
    text: "/status",
  });
  const reply = await settledAs("tight-a", posted.body.id, "answered");
  expect(reply.text).toMatch(
    /Spend: today \$0\.\d{4}, [\d,]+ tokens; this month \$0\.\d{4}, [\d,]+ tokens; the daily limit per channel of binding "tight": \$0\.\d{4} of \$100\.00, resets \d{4}-\d\d-\d\d 00:00 UTC/,
  );
});
