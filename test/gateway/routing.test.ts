import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { schemaVersion } from "../../src/gateway/store/sqlite/migrations.js";
import { waitFor } from "../helpers/wait-for.js";
import { type ApiMessage, startTestGateway, type TestGateway } from "./helpers.js";

interface Runner {
  channelId: string;
  pid: number | null;
  inflight: boolean;
  idleSince: string | null;
  sessionId: string | null;
  oneShot: boolean;
}

const gateways: TestGateway[] = [];
async function gatewayWith(options: Parameters<typeof startTestGateway>[0]) {
  const gateway = await startTestGateway(options);
  gateways.push(gateway);
  return gateway;
}
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.cleanup()));
});

function answered(gateway: TestGateway, channelId: string, count: number) {
  return waitFor(async () => {
    const messages = await gateway.messages(channelId);
    const users = messages.filter((message) => message.kind === "user");
    return users.length === count && users.every((message) => message.state === "answered")
      ? messages
      : undefined;
  }, `${count} answered messages in ${channelId}`);
}

describe("routing messages to agent processes", () => {
  it("stores a message before routing it, starts a turn and stores the reply", async () => {
    const gateway = await gatewayWith({ prefix: "route", scenario: "timeout" });
    const posted = await gateway.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/alpha/messages",
      { text: "hello there" },
    );
    expect(posted).toEqual({
      status: 202,
      body: { id: expect.any(String), disposition: "started" },
    });
    // The fake hangs in this scenario: the message is stored, received, and in flight.
    const database = new Database(join(gateway.dataDir, "gateway.db"), { readonly: true });
    try {
      const row = database.prepare("SELECT * FROM messages WHERE id = ?").get(posted.body.id);
      expect(row).toMatchObject({
        channel_id: "alpha",
        role: "user",
        kind: "user",
        state: "received",
      });
      expect(database.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(database.pragma("user_version", { simple: true })).toBe(schemaVersion);
    } finally {
      database.close();
    }
    const runners = await waitFor(async () => {
      const { body } = await gateway.api<{ runners: Runner[] }>("GET", "/api/runners");
      return body.runners.find((runner) => runner.channelId === "alpha" && runner.pid !== null);
    }, "a live runner for alpha");
    expect(runners).toMatchObject({ inflight: true, idleSince: null, oneShot: false });
    const channels = await gateway.api<{ channels: Array<{ id: string; inflight: boolean }> }>(
      "GET",
      "/api/channels",
    );
    expect(channels.body.channels).toEqual([
      expect.objectContaining({ id: "alpha", inflight: true, live: true }),
    ]);
  });

  it("answers a message and keeps the channel's process for the next one", async () => {
    const gateway = await gatewayWith({ prefix: "answer" });
    await gateway.api("POST", "/api/channels/beta/messages", { text: "one" });
    const messages = await answered(gateway, "beta", 1);
    expect(messages).toEqual([
      expect.objectContaining({ role: "user", kind: "user", text: "one", state: "answered" }),
      expect.objectContaining({
        role: "assistant",
        kind: "reply",
        replyTo: messages[0]!.id,
        text: expect.stringContaining("one"),
      }),
    ]);
    const { body } = await gateway.api<{ runners: Runner[] }>("GET", "/api/runners");
    const [runner] = body.runners;
    expect(runner).toMatchObject({ channelId: "beta", inflight: false, oneShot: false });
    expect(runner?.idleSince).toEqual(expect.any(String));
    expect(runner?.sessionId).toEqual(expect.any(String));

    const second = await gateway.api<{ disposition: string }>(
      "POST",
      "/api/channels/beta/messages",
      {
        text: "two",
      },
    );
    expect(second.body.disposition).toBe("started");
    await answered(gateway, "beta", 2);
    const after = await gateway.api<{ runners: Runner[] }>("GET", "/api/runners");
    expect(after.body.runners[0]?.pid).toBe(runner?.pid);

    expect(await gateway.api("DELETE", "/api/runners/beta")).toEqual({
      status: 200,
      body: { stopped: "beta" },
    });
    const stopped = await gateway.api<{ runners: Runner[] }>("GET", "/api/runners");
    expect(stopped.body.runners).toEqual([]);
  });

  it("steers the turn in flight with a message that arrives during it", async () => {
    const gateway = await gatewayWith({ prefix: "steer", scenario: "steer" });
    const first = await gateway.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/gamma/messages",
      { text: "first message" },
    );
    const second = await gateway.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/gamma/messages",
      { text: "second message" },
    );
    expect(first.body.disposition).toBe("started");
    expect(second.body.disposition).toBe("steered");
    const messages = await answered(gateway, "gamma", 2);
    const replies = messages.filter((message: ApiMessage) => message.kind === "reply");
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ replyTo: first.body.id });
    expect(replies[0]?.text).toContain("steered:");
    expect(replies[0]?.text).toContain("second message");
  });

  it("answers with a one-shot process when the registry is at maxLive", async () => {
    const gateway = await gatewayWith({ prefix: "oneshot", maxLive: 1 });
    const kept = await gateway.api<{ disposition: string }>("POST", "/api/channels/one/messages", {
      text: "kept",
    });
    expect(kept.body.disposition).toBe("started");
    await answered(gateway, "one", 1);
    const other = await gateway.api<{ disposition: string }>("POST", "/api/channels/two/messages", {
      text: "at the cap",
    });
    expect(other.body.disposition).toBe("one_shot");
    const messages = await answered(gateway, "two", 1);
    expect(messages[1]?.text).toContain("at the cap");
    await waitFor(async () => {
      const { body } = await gateway.api<{ runners: Runner[] }>("GET", "/api/runners");
      return body.runners.length === 1 && body.runners[0]?.channelId === "one";
    }, "the one-shot process to be gone");
  });

  it("answers a burst of concurrent messages to one channel, each exactly once", async () => {
    const gateway = await gatewayWith({ prefix: "burst" });
    const texts = Array.from({ length: 12 }, (_, index) => `burst message ${index}`);
    const posted = await Promise.all(
      texts.map((text) =>
        gateway.api<{ disposition: string }>("POST", "/api/channels/burst/messages", { text }),
      ),
    );
    // How many start a turn and how many steer one depends on how fast turns end on a loaded
    // machine; what must hold is that none is lost or answered twice.
    const dispositions = posted.map((response) => response.body.disposition);
    expect(dispositions.every((value) => value === "started" || value === "steered")).toBe(true);
    expect(dispositions).toContain("started");
    const messages = await answered(gateway, "burst", texts.length);
    expect(messages.filter((message) => message.kind === "error")).toEqual([]);
    const replies = messages.filter((message) => message.kind === "reply");
    for (const text of texts) {
      expect(
        replies.filter((reply) => reply.text.includes(`${text}\n`)),
        text,
      ).toHaveLength(1);
    }
  });
});
