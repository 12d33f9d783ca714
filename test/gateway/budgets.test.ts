/**
 * Budgets in a gateway whose agents are rudder (against the fake Messages API, Sonnet's prices):
 * a turn that crosses its channel's daily limit is stopped at its next model call with what it
 * did kept; the channel's next message is answered at once with the limit, the amount and the
 * reset, and nothing is sent to the model; raising the limit in the configuration (a reload)
 * lets it go on; `GET /api/spend` and `/status` report the spend against the limit; a wake-up
 * (the agent's turn of its own after a background task) past the limit is held, its model
 * call never made.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { scheduleCommandLine } from "../../src/cli/schedule.js";
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

interface ListedSchedule {
  id: string;
  paused: boolean;
  lastError: string | null;
}

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

// Between the turn that crossed the limit and the raise.
it("pauses a schedule over its binding's budget, and says why in the API and `rudder schedule list`", async () => {
  const added = await gateway.api<{ schedule: ListedSchedule }>("POST", "/api/schedules", {
    cron: "* * * * * *",
    channelId: "tight-a",
    prompt: "tick",
  });
  expect(added.status).toBe(201);
  const paused = await waitFor(async () => {
    const { body } = await gateway.api<{ schedules: ListedSchedule[] }>("GET", "/api/schedules");
    return body.schedules.find((each) => each.id === added.body.schedule.id && each.paused);
  }, "the schedule paused");
  expect(paused.lastError).toMatch(
    /^Budget reached: the daily limit per channel of binding "tight" is \$0\.0010, and \$0\.\d+ was spent today\./,
  );
  // Nothing of the schedule's reached the channel but the notice saying so.
  const messages = await waitFor(async () => {
    const all = await gateway.messages("tight-a");
    return all.at(-1)?.role === "system" ? all : undefined;
  }, "the schedule's notice");
  expect(messages.some((each) => each.text === "tick")).toBe(false);
  expect(messages.at(-1)?.text).toContain(
    `Schedule ${paused.id} ("* * * * * *") paused itself: Budget reached`,
  );

  let listed = "";
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      listed += String(chunk);
      done();
    },
  });
  const code = await scheduleCommandLine(
    ["list", "--url", gateway.url, "--data", gateway.dataDir],
    {
      stdout,
      stderr: stdout,
      stdin: process.stdin,
      env: {},
    },
  );
  expect(code).toBe(0);
  expect(listed).toContain(
    `${paused.id}\t* * * * * *\ttight-a\tpaused (Budget reached: the daily limit per channel of binding "tight"`,
  );
  await gateway.api("DELETE", `/api/schedules/${paused.id}`);
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

async function channelSpent(channelId: string): Promise<{ usd: number; tokens: number }> {
  const { body } = await gateway.api<SpendReport>("GET", "/api/spend");
  return body.channels.find((each) => each.channelId === channelId)?.today ?? { usd: 0, tokens: 0 };
}

it("counts a wake-up's spend (a background task's end) and a /compact's", async () => {
  const go = join(workspace, "wake-go");
  api.push(
    {
      toolUse: {
        name: "Bash",
        input: {
          command: `while [ ! -e ${go} ]; do sleep 0.05; done; printf build-ok`,
          run_in_background: true,
        },
      },
    },
    { text: "Started the build." },
    { text: "The build finished: build-ok." },
  );
  const posted = await gateway.api<{ id: string }>("POST", "/api/channels/tight-a/messages", {
    text: "run the build",
  });
  await settledAs("tight-a", posted.body.id, "answered");
  const afterTurn = await channelSpent("tight-a");
  expect(afterTurn.tokens).toBeGreaterThan(0);
  const before = mainRequests();
  // The background task ends only now: the agent wakes itself, makes a model call, answers.
  writeFileSync(go, "");
  await waitFor(
    async () =>
      (await gateway.messages("tight-a")).some((each) => each.text.includes("finished: build-ok")),
    "the wake-up's reply",
    30_000,
  );
  const wakeCalls = api.requests.filter((request) => request.main).slice(before);
  expect(wakeCalls.length).toBeGreaterThan(0);
  const wakeTokens = wakeCalls.reduce((sum, request) => sum + request.tokens, 0);
  const afterWake = await waitFor(async () => {
    const spent = await channelSpent("tight-a");
    return spent.tokens >= afterTurn.tokens + wakeTokens ? spent : undefined;
  }, "the wake-up's spend counted");
  expect(afterWake.usd).toBeGreaterThan(afterTurn.usd);

  const beforeCompact = mainRequests();
  const compacted = await gateway.api<{ ok: boolean }>("POST", "/api/channels/tight-a/compact", {});
  expect(compacted.status).toBe(200);
  const summaryCalls = api.requests.filter((request) => request.main).slice(beforeCompact);
  expect(summaryCalls.length).toBeGreaterThan(0);
  const summaryTokens = summaryCalls.reduce((sum, request) => sum + request.tokens, 0);
  const afterCompact = await channelSpent("tight-a");
  expect(afterCompact.tokens).toBeGreaterThanOrEqual(afterWake.tokens + summaryTokens);
  expect(afterCompact.usd).toBeGreaterThan(afterWake.usd);
});

it("holds a wake-up past the limit: the agent does not wake, and its channel says why", async () => {
  const go = join(workspace, "wake-held-go");
  api.push(
    {
      toolUse: {
        name: "Bash",
        input: {
          command: `while [ ! -e ${go} ]; do sleep 0.05; done; printf second-ok`,
          run_in_background: true,
        },
      },
    },
    { text: "Started the second build." },
  );
  const posted = await gateway.api<{ id: string }>("POST", "/api/channels/tight-w/messages", {
    text: "run the second build",
  });
  await settledAs("tight-w", posted.body.id, "answered");
  // The channel's limit falls below what it spent while its task runs.
  writeConfig(0.001);
  await gateway.reloadConfig();
  const before = mainRequests();
  writeFileSync(go, "");
  const held = await waitFor(
    async () => (await gateway.messages("tight-w")).find((each) => each.text.includes("wake-up")),
    "the held wake-up's line",
    30_000,
  );
  expect(held.text).toMatch(
    /^The agent's wake-up \(a background task finished\) paused by a budget: Budget reached: the daily limit per channel of binding "tight" is \$0\.0010/,
  );
  // The agent asked before its model call and was refused: no call was made.
  expect(mainRequests()).toBe(before);
  expect((await gateway.messages("tight-w")).some((each) => each.text.includes("second-ok"))).toBe(
    false,
  );
});
