/**
 * The Telegram source against the fake Bot API (a real HTTP server on
 * 127.0.0.1), with the gateway's real event bus and permission requests and a
 * recording `deliver` in place of the router.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  TelegramChannelSource,
  type TelegramSourceOptions,
} from "../../../src/channels/telegram/telegram-source.js";
import type { PermissionDecision } from "../../../src/claude-cli/permission-request.js";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import type { Disposition, GatewayEvent } from "../../../src/gateway/events.js";
import { GatewayClosedError } from "../../../src/gateway/routing/router.js";
import type { SourceStore } from "../../../src/gateway/store/source-store.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";
import { type FakeTelegramApi, startFakeTelegramApi } from "../../helpers/fake-telegram-api.js";
import { waitFor } from "../../helpers/wait-for.js";

interface Delivered {
  channelId: string;
  text: string;
  meta: Record<string, unknown> | undefined;
}

let api: FakeTelegramApi;
const harnesses: Array<{ stop(): Promise<void> }> = [];

beforeEach(async () => {
  api = await startFakeTelegramApi();
});

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.stop();
  await api.close();
});

async function startSource(
  options: Partial<TelegramSourceOptions> & {
    knownChannels?: string[];
    deliverError?: () => Error | undefined;
    store?: SourceStore;
    disposition?: Disposition;
    interrupt?: (channelId: string) => Promise<boolean>;
  } = {},
) {
  const {
    knownChannels = [],
    deliverError,
    store,
    disposition = "started",
    interrupt,
    ...rest
  } = options;
  const bus = new EventBus();
  const permissions = new PermissionRequests({ bus });
  const closing = new AbortController();
  const delivered: Delivered[] = [];
  const logs: string[] = [];
  const source = new TelegramChannelSource({
    token: api.token,
    allow: ["111"],
    apiUrl: api.url,
    pollTimeoutSeconds: 5,
    backoff: { initialMs: 20, maxMs: 200 },
    logger: (line) => logs.push(line),
    ...rest,
  });
  await source.start(
    async (channelId, text, meta) => {
      const error = deliverError?.();
      if (error) throw error;
      delivered.push({ channelId, text, meta });
      return { id: `message-${delivered.length}`, disposition };
    },
    {
      subscribe: (channelId, listener) =>
        bus.subscribe(
          channelId,
          (numbered) => listener(numbered.event),
          bus.replay(channelId).at(-1)?.id ?? 0,
        ),
      channelIds: async () => knownChannels,
      permissions,
      signal: closing.signal,
      ...(store ? { store } : {}),
      ...(interrupt ? { interrupt } : {}),
    },
  );
  const harness = {
    source,
    bus,
    permissions,
    closing,
    delivered,
    logs,
    reply: (channelId: string, text: string, type: "reply" | "error" = "reply") =>
      bus.publish({
        type,
        channelId,
        message: {
          id: `reply-${Math.random()}`,
          channelId,
          role: "assistant",
          text,
          state: null,
          replyTo: null,
          kind: type,
          createdAt: new Date().toISOString(),
        },
      } as GatewayEvent),
    stop: async () => {
      await source.stop();
      permissions.close();
    },
  };
  harnesses.push(harness);
  return harness;
}

const sentTo = (chatId: string) => api.sent.filter((message) => message.chatId === chatId);

function waitForSent(chatId: string, pattern: RegExp | string) {
  return waitFor(
    () =>
      sentTo(chatId).find((message) =>
        typeof pattern === "string" ? message.text.includes(pattern) : pattern.test(message.text),
      ),
    `a message to chat ${chatId} matching ${pattern}`,
  );
}

const updateCalls = () => api.calls.filter((call) => call.method === "getUpdates");

describe("the Telegram source", () => {
  it("delivers an allowed user's text once to telegram:<chat id>, confirming it by offset", async () => {
    const harness = await startSource();
    const update = api.pushMessage({ userId: 111, text: "hello agent" });
    await waitFor(() => harness.delivered.length === 1, "the delivery");
    expect(harness.delivered[0]).toMatchObject({
      channelId: "telegram:111",
      text: "hello agent",
      // A private chat's title (the page's name for the channel) is the person's.
      meta: { source: "telegram", chatId: "111", userId: "111", chatTitle: "user 111" },
    });
    const confirming = await waitFor(
      () => updateCalls().find((call) => call.body.offset === update.update_id + 1),
      "a poll confirming the update",
    );
    expect(confirming.body).toMatchObject({
      timeout: 5,
      allowed_updates: ["message", "callback_query"],
    });
    api.pushMessage({ userId: 111, text: "second" });
    await waitFor(() => harness.delivered.length === 2, "the second delivery");
    expect(harness.delivered.map((item) => item.text)).toEqual(["hello agent", "second"]);
  });

  it("processes an update once across a restart of the source", async () => {
    const first = await startSource();
    api.pushMessage({ userId: 111, text: "before the restart" });
    await waitFor(() => first.delivered.length === 1, "the first source's delivery");
    await first.stop();
    const second = await startSource();
    api.pushMessage({ userId: 111, text: "after the restart" });
    await waitFor(() => second.delivered.length === 1, "the second source's delivery");
    expect(second.delivered.map((item) => item.text)).toEqual(["after the restart"]);
  });

  it("keeps the offset in its state folder, so an update stored before a crash is not taken again", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "rudder-telegram-state-"));
    try {
      const stored = api.pushMessage({ userId: 111, text: "stored before the crash" });
      // As a source killed after storing that message, before any poll confirmed it, leaves it.
      writeFileSync(join(stateDir, "telegram-4242.offset"), `${stored.update_id + 1}\n`);
      const harness = await startSource({ stateDir });
      const next = api.pushMessage({ userId: 111, text: "after the crash" });
      await waitFor(() => harness.delivered.length === 1, "the delivery");
      expect(harness.delivered.map((item) => item.text)).toEqual(["after the crash"]);
      expect(readFileSync(join(stateDir, "telegram-4242.offset"), "utf8")).toBe(
        `${next.update_id + 1}\n`,
      );
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it("shows typing while the agent works", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 111, text: "think hard" });
    const action = await waitFor(
      () => api.calls.find((call) => call.method === "sendChatAction"),
      "a chat action",
    );
    expect(action.body).toEqual({ chat_id: "111", action: "typing" });
    harness.reply("telegram:111", "done thinking");
    await waitForSent("111", "done thinking");
  });

  it("sends replies as Telegram HTML, escaped, and errors as plain text", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 111, text: "hi" });
    await waitFor(() => harness.delivered.length === 1, "the delivery");
    harness.reply("telegram:111", "*not bold* <b>nor this</b>");
    harness.reply("telegram:111", "The agent process crashed.", "error");
    await waitForSent("111", "The agent process crashed.");
    expect(sentTo("111").map((message) => [message.text, message.parseMode])).toEqual([
      ["<i>not bold</i> &lt;b&gt;nor this&lt;/b&gt;", "HTML"],
      ["The agent process crashed.", undefined],
    ]);
  });

  it("splits a reply over 4096 characters on line boundaries, in order", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 111, text: "long please" });
    await waitFor(() => harness.delivered.length === 1, "the delivery");
    const lines = Array.from({ length: 300 }, (_, index) => `line ${index} ${"x".repeat(40)}`);
    harness.reply("telegram:111", lines.join("\n"));
    await waitForSent("111", "line 299 ");
    const parts = sentTo("111").map((message) => message.text);
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.every((part) => part.length <= 4096)).toBe(true);
    expect(parts.join("\n")).toBe(lines.join("\n"));
  });

  it("answers replies for channels it knew before a restart", async () => {
    const harness = await startSource({ knownChannels: ["telegram:111", "web", "telegram:-5"] });
    harness.reply("telegram:-5", "answer after restart");
    harness.reply("web", "not for telegram");
    await waitForSent("-5", "answer after restart");
    expect(api.sent.map((message) => message.chatId)).toEqual(["-5"]);
  });

  it("refuses a stranger once with their id and never delivers their text", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 666, text: "let me in" });
    api.pushMessage({ userId: 666, text: "please" });
    const last = api.pushMessage({ userId: 111, text: "owner here" });
    await waitFor(() => harness.delivered.length === 1, "the owner's delivery");
    await waitFor(
      () => updateCalls().some((call) => call.body.offset === last.update_id + 1),
      "all updates processed",
    );
    await waitForSent("666", "Not allowed");
    const refusals = sentTo("666");
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.text).toMatch(/not allowed/i);
    expect(refusals[0]?.text).toContain("666");
    expect(harness.delivered.map((item) => item.channelId)).toEqual(["telegram:111"]);
    expect(harness.logs.filter((line) => line.includes("666"))).toHaveLength(1);
  });

  it("lets a whole chat in by its id, and refuses a stranger in an allowed user's group", async () => {
    const harness = await startSource({ allow: ["111", "-100200"], groups: "all" });
    api.pushMessage({ userId: 777, chatId: -100200, text: "in the allowed group" });
    api.pushMessage({ userId: 888, chatId: -300, text: "a group of strangers" });
    api.pushMessage({ userId: 111, chatId: -300, text: "owner in that group" });
    await waitFor(() => harness.delivered.length === 2, "two deliveries");
    expect(harness.delivered.map((item) => item.channelId)).toEqual([
      "telegram:-100200",
      "telegram:-300",
    ]);
    await waitForSent("-300", "888");
  });

  it("answers /start, /help and unknown commands without bothering the agent", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 111, text: "/start" });
    api.pushMessage({ userId: 111, text: "/help@rudder_test_bot" });
    api.pushMessage({ userId: 111, text: "/frobnicate now" });
    api.pushMessage({ userId: 111, text: "/help@some_other_bot" });
    api.pushMessage({ userId: 111, text: "/tmp/build is full" });
    await waitFor(() => harness.delivered.length === 1, "the path message delivered");
    await waitForSent("111", "Unknown command /frobnicate");
    expect(harness.delivered[0]?.text).toBe("/tmp/build is full");
    const texts = sentTo("111").map((message) => message.text);
    expect(texts.filter((text) => text.includes("/allow <id>"))).toHaveLength(3);
  });

  it("takes /stop to the gateway's interrupt of the chat's running turn, never to the agent", async () => {
    const interrupted: string[] = [];
    const harness = await startSource({
      interrupt: async (channelId) => {
        interrupted.push(channelId);
        return interrupted.length === 1;
      },
    });
    api.pushMessage({ userId: 111, text: "/stop" });
    await waitForSent("111", "Stopped the running turn.");
    api.pushMessage({ userId: 111, text: "/stop@rudder_test_bot" });
    await waitForSent("111", "Nothing is running in this chat.");
    expect(interrupted).toEqual(["telegram:111", "telegram:111"]);
    expect(harness.delivered).toEqual([]);
  });

  it("passes /compact and /clear for this bot to the channel, and sends back its dividers", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 111, text: "/compact keep the names" });
    api.pushMessage({ userId: 111, text: "/compact@some_other_bot" });
    api.pushMessage({ userId: 111, text: "/clear@rudder_test_bot" });
    await waitFor(() => harness.delivered.length === 2, "two commands delivered");
    expect(harness.delivered.map((item) => [item.channelId, item.text])).toEqual([
      ["telegram:111", "/compact keep the names"],
      ["telegram:111", "/clear@rudder_test_bot"],
    ]);
    harness.bus.publish({
      type: "notice",
      channelId: "telegram:111",
      message: {
        id: "divider-1",
        channelId: "telegram:111",
        role: "system",
        text: "Context compacted: 12k -> 2k tokens.",
        state: null,
        replyTo: null,
        kind: "compaction",
        createdAt: new Date().toISOString(),
      },
    });
    await waitForSent("111", "Context compacted: 12k -> 2k tokens.");
  });

  it("asks in the chat and takes /allow and /deny with a note", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 111, text: "clean up" });
    await waitFor(() => harness.delivered.length === 1, "the delivery");
    const ask = (command: string): Promise<PermissionDecision> =>
      harness.permissions.ask("telegram:111", {
        requestId: "r",
        toolName: "bash",
        input: { command },
        toolUseId: undefined,
        raw: {},
      });

    const first = ask("rm old.log");
    const announced = await waitForSent("111", "rm old.log");
    const id = /\/allow (\S+)/.exec(announced.text)?.[1] ?? "";
    expect(announced.text).toContain(`/deny ${id}`);
    api.pushMessage({ userId: 111, text: `/allow ${id}` });
    expect(await first).toEqual({ behavior: "allow" });
    await waitForSent("111", `${id}: allowed`);

    const second = ask("rm keep.txt");
    const secondId = /\/allow (\S+)/.exec((await waitForSent("111", "rm keep.txt")).text)?.[1];
    api.pushMessage({ userId: 111, text: `/deny ${secondId} use the trash instead` });
    expect(await second).toEqual({ behavior: "deny", message: "use the trash instead" });

    const third = ask("rm third.txt");
    await waitForSent("111", "rm third.txt");
    api.pushMessage({ userId: 111, text: "/deny not this one" });
    expect(await third).toEqual({ behavior: "deny", message: "not this one" });

    api.pushMessage({ userId: 111, text: `/allow ${id}` });
    await waitForSent("111", `No permission request ${id} is waiting`);
    expect(harness.delivered).toHaveLength(1);
  });

  it("makes each forum topic its own channel, answered in its topic", async () => {
    const harness = await startSource({ allow: ["111", "-100300"] });
    api.pushMessage({ userId: 111, chatId: -100300, topic: 7, text: "/compact in topic seven" });
    await waitFor(() => harness.delivered.length === 1, "the delivery");
    expect(harness.delivered[0]?.channelId).toBe("telegram:-100300:7");
    harness.reply("telegram:-100300:7", "answered in the topic");
    const answer = await waitForSent("-100300", "answered in the topic");
    expect(answer.threadId).toBe(7);
  });

  it("in a group, takes only what addresses the bot, naming the sender", async () => {
    const harness = await startSource({ allow: ["-100400"] });
    api.pushMessage({ userId: 5, chatId: -100400, text: "talking among ourselves" });
    api.pushMessage({
      userId: 6,
      chatId: -100400,
      text: "@rudder_test_bot please look",
      firstName: "Ada",
    });
    await waitFor(() => harness.delivered.length === 1, "the addressed message delivered");
    const last = api.pushMessage({ userId: 5, chatId: -100400, text: "still among ourselves" });
    await waitFor(
      () => updateCalls().some((call) => call.body.offset === last.update_id + 1),
      "every update processed",
    );
    expect(harness.delivered.map((item) => item.text)).toEqual(["@rudder_test_bot please look"]);
    expect(harness.delivered[0]?.meta).toMatchObject({ userId: "6", userName: "Ada" });
  });

  it("acknowledges a message that joins the running turn, as a reply to it", async () => {
    const harness = await startSource({ disposition: "steered" });
    const update = api.pushMessage({ userId: 111, text: "and also this" });
    const ack = await waitForSent("111", "Added to what the agent is doing now");
    expect(ack.replyTo).toBe(update.message?.message_id);
    expect(harness.delivered).toHaveLength(1);
  });

  it("edits the turn's status message, honouring an edit's 429 retry_after", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 111, text: "work" });
    await waitFor(() => harness.delivered.length === 1, "the delivery");
    const publish = (event: Record<string, unknown>) =>
      harness.bus.publish({ channelId: "telegram:111", ...event } as GatewayEvent);
    api.failNext("editMessageText", { status: 429, retryAfterSeconds: 1 });
    publish({ type: "tool_start", toolUseId: "t1", name: "bash", input: { command: "make all" } });
    const status = await waitForSent("111", "Working");
    expect(status.text).toMatch(/▸ bash: make all/);
    publish({ type: "tool_end", toolUseId: "t1", name: "bash", content: "ok", isError: false });
    publish({ type: "turn_end", outcome: {} });
    await waitFor(() => /^Done: 1 step/.test(status.text), "the status closed");
    const edits = api.calls.filter((call) => call.method === "editMessageText");
    expect(edits.length).toBeGreaterThanOrEqual(2);
    expect((edits.at(-1)?.at ?? 0) - (edits[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(status.text).toMatch(/✓ bash: make all \(\d+ s\)/);
  });

  it("takes a reply to a permission card as a denial with its reason", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 111, text: "clean up" });
    await waitFor(() => harness.delivered.length === 1, "the delivery");
    const decision = harness.permissions.ask("telegram:111", {
      requestId: "r",
      toolName: "bash",
      input: { command: "rm -r build" },
      toolUseId: undefined,
      raw: {},
    });
    const card = await waitForSent("111", "rm -r build");
    api.pushMessage({ userId: 111, text: "keep the build", replyTo: card.messageId });
    expect(await decision).toEqual({ behavior: "deny", message: "keep the build" });
    await waitFor(() => /denied by user 111: keep the build/.test(card.text), "the card edited");
    expect(harness.delivered).toHaveLength(1);
  });

  it("honours a 429's retry_after and backs off after 500s, losing no update", async () => {
    const harness = await startSource();
    await waitFor(() => api.waitingPolls() === 1, "the first long poll");
    api.failNext("getUpdates", { status: 500, description: "Internal Server Error" }, 2);
    api.failNext("getUpdates", {
      status: 429,
      description: "Too Many Requests",
      retryAfterSeconds: 1,
    });
    api.pushMessage({ userId: 111, text: "before the storm" });
    await waitFor(
      () => updateCalls().length >= 5 && api.waitingPolls() === 1,
      "polling again after two 500s and a 429",
    );
    api.pushMessage({ userId: 111, text: "after the storm" });
    await waitFor(() => harness.delivered.length === 2, "the second delivery");
    const calls = updateCalls();
    // The poll after the 429 waited for its retry_after (1 s), not the 20 ms backoff.
    expect((calls[4]?.at ?? 0) - (calls[3]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(harness.logs.some((line) => line.includes("500 Internal Server Error"))).toBe(true);
    expect(harness.delivered.map((item) => item.text)).toEqual([
      "before the storm",
      "after the storm",
    ]);
  });

  it("retries a reply the API rate-limits and sends it once", async () => {
    const harness = await startSource();
    api.pushMessage({ userId: 111, text: "hi" });
    await waitFor(() => harness.delivered.length === 1, "the delivery");
    api.failNext("sendMessage", { status: 429, retryAfterSeconds: 1 });
    api.failNext("sendMessage", { status: 502 });
    harness.reply("telegram:111", "worth the wait");
    await waitForSent("111", "worth the wait");
    expect(sentTo("111")).toHaveLength(1);
    expect(api.calls.filter((call) => call.method === "sendMessage")).toHaveLength(3);
  });

  it("gives up on a sendMessage that never answers and sends the reply again", async () => {
    const harness = await startSource({ sendTimeoutMs: 300 });
    api.pushMessage({ userId: 111, text: "hi" });
    await waitFor(() => harness.delivered.length === 1, "the delivery");
    api.failNext("sendMessage", { status: 0, hang: true });
    harness.reply("telegram:111", "after a stuck connection");
    harness.reply("telegram:111", "and the next one");
    await waitForSent("111", "and the next one");
    expect(sentTo("111").map((message) => message.text)).toEqual([
      "after a stuck connection",
      "and the next one",
    ]);
    expect(harness.logs.filter((line) => line.includes("dropped"))).toEqual([]);
  });

  it("gives up a reply that fails for hours, with a line in the channel's history", async () => {
    const folder = mkdtempSync(join(tmpdir(), "rudder-telegram-ledger-"));
    const store = new SqliteGatewayStore(join(folder, "gateway.db"));
    let hoursLater = 0;
    try {
      const harness = await startSource({
        store: store.sourceStore(),
        knownChannels: ["telegram:111"],
        now: () => Date.now() + hoursLater * 3_600_000,
      });
      api.failNext("sendMessage", { status: 502, text: /lost in the storm/ }, 10_000);
      harness.reply("telegram:111", "lost in the storm");
      await waitFor(
        () => api.calls.filter((call) => call.method === "sendMessage").length >= 3,
        "a few failed tries",
      );
      hoursLater = 4;
      const line = await waitFor(
        async () =>
          (await store.listMessages("telegram:111")).find((message) =>
            /could not be delivered to telegram for 4 hours and was given up/.test(message.text),
          ),
        "the line in the channel's history",
      );
      expect(line.kind).toBe("error");
      hoursLater = 0;
      const tries = api.calls.filter((call) => call.method === "sendMessage").length;
      expect(await store.sourceStore().outbound.unsent("telegram")).toEqual([]);
      harness.reply("telegram:111", "the next one goes out");
      await waitForSent("111", "the next one goes out");
      expect(api.sent.some((message) => message.text.includes("lost in the storm"))).toBe(false);
      expect(api.calls.filter((call) => call.method === "sendMessage")).toHaveLength(tries + 1);
    } finally {
      for (const harness of harnesses.splice(0)) await harness.stop();
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("stops on a rejected token with one log line that does not show the token", async () => {
    const secret = "999:the-secret-token";
    const harness = await startSource({ token: secret });
    await harness.source.finished();
    expect(harness.logs).toHaveLength(1);
    expect(harness.logs[0]).toMatch(/rejected the bot token \(401\).*stopped/);
    expect(harness.logs.join("\n")).not.toContain("the-secret-token");
    const callsAtStop = api.calls.length;
    api.pushMessage({ userId: 111, text: "anyone?" });
    await harness.stop();
    expect(api.calls.length).toBe(callsAtStop);
    expect(harness.delivered).toEqual([]);
  });

  it("aborts the in-flight long poll when the gateway shuts down", async () => {
    const harness = await startSource({ pollTimeoutSeconds: 50 });
    await waitFor(() => api.waitingPolls() === 1, "a long poll waiting");
    harness.closing.abort();
    await harness.source.finished();
    await waitFor(() => api.abandonedPolls() === 1, "the poll abandoned");
    await harness.stop();
  });

  it("leaves an update unconfirmed when the gateway closes under it", async () => {
    let closed = false;
    const harness = await startSource({
      deliverError: () => (closed ? new GatewayClosedError() : undefined),
    });
    closed = true;
    const update = api.pushMessage({ userId: 111, text: "arrives while closing" });
    await harness.source.finished();
    expect(updateCalls().some((call) => (call.body.offset ?? 0) > update.update_id)).toBe(false);
    expect(harness.delivered).toEqual([]);
  });
});
