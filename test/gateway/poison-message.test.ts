/**
 * A poison message under a supervisor: one that takes the gateway down each time it is handled
 * (after its agent started on it, or before the agent printed anything) is given up on after a
 * bounded number of runs, and one that kills its agent ends in the run it happened, counted
 * once. The gateway runs in a process of its own, restarted on the same data after each death,
 * as systemd's `Restart=always` would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { poll } from "../../bench/chaos/figures.js";
import { type GatewayChildOptions, GatewayProcess } from "../../bench/gateway-process.js";
import { FAKE_CLAUDE } from "../helpers/fixtures.js";
import type { ApiMessage } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "rudder-poison-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Kills = "gateway-on-read" | "gateway-once-started" | "itself-once-started";

function options(name: string, kills: Kills, extra: Partial<GatewayChildOptions> = {}) {
  return {
    dataDir: join(root, name),
    port: 0,
    engine: {
      claudeBin: FAKE_CLAUDE,
      env: { FAKE_CLAUDE_POISON: "POISON", FAKE_CLAUDE_POISON_KILLS: kills },
    },
    ...extra,
  } satisfies GatewayChildOptions;
}

async function messages(gateway: GatewayProcess, channelId: string): Promise<ApiMessage[]> {
  const { body } = await gateway.api<{ messages: ApiMessage[] }>(
    "GET",
    `/api/channels/${channelId}/messages`,
  );
  return body.messages;
}

/** Polls the channel until its first message is settled, or undefined once the gateway died. */
async function settledOrDied(gateway: GatewayProcess, channelId: string) {
  let died = false;
  void gateway.exited.then(() => {
    died = true;
  });
  return poll(async () => {
    if (died) return "died" as const;
    const all = await messages(gateway, channelId).catch(() => undefined);
    const first = all?.[0];
    return first && (first.state === "answered" || first.state === "failed") ? all : undefined;
  }, 120_000);
}

/**
 * Posts `text` to the channel, then starts the gateway again after each death, as a supervisor
 * would, until the message is settled. Returns the deaths and the channel's messages then.
 */
async function supervise(gatewayOptions: GatewayChildOptions, channelId: string, text: string) {
  let gateway = await GatewayProcess.start(gatewayOptions);
  const posted = await gateway.api("POST", `/api/channels/${channelId}/messages`, { text });
  expect(posted.status).toBe(202);
  let deaths = 0;
  for (;;) {
    const outcome = await settledOrDied(gateway, channelId);
    if (outcome !== "died" && outcome !== undefined) {
      const after = await gateway.api("POST", `/api/channels/${channelId}/messages`, {
        text: "and this one?",
      });
      expect(after.status).toBe(202);
      const answered = await poll(async () => {
        const all = await messages(gateway, channelId);
        const reply = all.find(
          (message) => message.kind === "reply" && message.text.includes("and this one?"),
        );
        return reply ? all : undefined;
      }, 60_000);
      await gateway.stop();
      return { deaths, messages: outcome, answered };
    }
    if (outcome === undefined) throw new Error("the gateway neither died nor settled the message");
    deaths += 1;
    if (deaths > 30) throw new Error("the poison message looped past every cap");
    gateway = await GatewayProcess.start(gatewayOptions);
  }
}

it("gives up on a message whose agent starts on it and the gateway dies, after 5 runs", async () => {
  const { deaths, messages, answered } = await supervise(
    options("started", "gateway-once-started"),
    "poison",
    "POISON after it starts",
  );
  expect(deaths).toBe(5);
  expect(messages[0]).toMatchObject({ state: "failed", attempts: 5, deliveries: 5 });
  expect(messages[1]?.kind).toBe("error");
  expect(messages[1]?.text).toContain("after 5 deliveries without an answer");
  expect(messages[1]?.text).toContain("its agent started on it each time");
  // The channel is not wedged: the next message is answered.
  expect(answered).toBeDefined();
}, 300_000);

it("gives up on a message that kills the gateway before its agent prints anything, at the delivery cap", async () => {
  const { deaths, messages, answered } = await supervise(
    options("read", "gateway-on-read", { maxDeliveries: 4 }),
    "poison",
    "POISON on read",
  );
  expect(deaths).toBe(4);
  expect(messages[0]).toMatchObject({ state: "failed", attempts: 0, deliveries: 4 });
  expect(messages[1]?.text).toContain("after 4 deliveries without an answer");
  expect(messages[1]?.text).toContain("the gateway died each time");
  expect(answered).toBeDefined();
}, 300_000);

it("fails a message that kills its agent in the run it happened, counted once though it ran twice", async () => {
  const gateway = await GatewayProcess.start(
    options("agent", "itself-once-started", {
      engine: {
        claudeBin: FAKE_CLAUDE,
        env: {
          FAKE_CLAUDE_POISON: "POISON",
          FAKE_CLAUDE_POISON_KILLS: "itself-once-started",
          FAKE_CLAUDE_REPLY_DELAY_MS: "1500",
        },
      },
    }),
  );
  try {
    // The second message steers the first one's turn; the agent dies starting on it, so it is
    // dispatched again as a turn of its own, whose agent dies too.
    const first = await gateway.api("POST", "/api/channels/agent/messages", { text: "slow one" });
    const poison = await gateway.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/agent/messages",
      { text: "POISON steered" },
    );
    expect([first.status, poison.status, poison.body.disposition]).toEqual([202, 202, "steered"]);
    const settled = await poll(async () => {
      const all = await messages(gateway, "agent");
      const message = all.find((each) => each.id === poison.body.id);
      return message?.state === "failed" ? message : undefined;
    }, 120_000);
    expect(settled).toMatchObject({ state: "failed", attempts: 1, deliveries: 1 });
    expect(gateway.child.exitCode).toBeNull();
  } finally {
    await gateway.stop();
  }
}, 300_000);
