import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { migrate, schemaVersion } from "../../../src/gateway/store/sqlite/migrations.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";

const folders: string[] = [];
function databasePath(): string {
  const folder = mkdtempSync(join(tmpdir(), "rudder-store-"));
  folders.push(folder);
  return join(folder, "nested", "gateway.db");
}
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe("the SQLite gateway store", () => {
  it("migrates a new file to the current version in WAL mode, and reopens it unchanged", async () => {
    const path = databasePath();
    const store = new SqliteGatewayStore(path);
    await store.insertUserMessage("c", "hello", "http");
    await store.close();
    const database = new Database(path);
    expect(database.pragma("user_version", { simple: true })).toBe(schemaVersion);
    expect(database.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(migrate(database)).toBe(schemaVersion);
    database.pragma(`user_version = ${schemaVersion + 1}`);
    expect(() => migrate(database)).toThrow(/newer than this rudder/);
    database.pragma(`user_version = ${schemaVersion}`);
    database.close();
    const reopened = new SqliteGatewayStore(path);
    expect((await reopened.listMessages("c")).map((message) => message.text)).toEqual(["hello"]);
    await reopened.close();
  });

  it("keeps channels, message states and attempts, in order", async () => {
    const store = new SqliteGatewayStore(databasePath());
    const first = await store.insertUserMessage("chan", "one", "http");
    const second = await store.insertUserMessage("chan", "two", "schedule:x");
    expect(first).toMatchObject({
      channelId: "chan",
      role: "user",
      kind: "user",
      state: "received",
      attempts: 0,
    });
    await store.setMessageState(first.id, "received");
    await store.setMessageState(second.id, "steered");
    expect(
      (await store.listUnanswered()).map((message) => [
        message.text,
        message.state,
        message.attempts,
      ]),
    ).toEqual([
      ["one", "received", 1],
      ["two", "steered", 1],
    ]);
    await store.setChannelSession("chan", "session-1");
    expect(await store.getChannel("chan")).toMatchObject({ id: "chan", sessionId: "session-1" });
    expect((await store.listChannels()).map((channel) => channel.id)).toEqual(["chan"]);
    expect((await store.listMessages("chan", 1)).map((message) => message.text)).toEqual(["two"]);
    await store.close();
  });

  it("settles a group of messages once: a second settlement answers nothing", async () => {
    const store = new SqliteGatewayStore(databasePath());
    const first = await store.insertUserMessage("c", "one", "http");
    const second = await store.insertUserMessage("c", "two", "http");
    const turn = {
      result: "both",
      costUsd: 0.01,
      usage: { input_tokens: 3 },
      durationMs: 5,
      numTurns: 2,
      isError: false,
      subtype: "success",
      sessionId: "s",
    };
    const reply = await store.settle({
      messageIds: [first.id, second.id],
      state: "answered",
      reply: { kind: "reply", text: "both" },
      turn,
    });
    expect(reply).toMatchObject({
      role: "assistant",
      kind: "reply",
      replyTo: first.id,
      text: "both",
    });
    expect(
      await store.settle({
        messageIds: [first.id],
        state: "failed",
        reply: { kind: "error", text: "late" },
      }),
    ).toBeNull();
    await store.setMessageState(first.id, "received");
    const messages = await store.listMessages("c");
    expect(messages.map((message) => [message.kind, message.state])).toEqual([
      ["user", "answered"],
      ["user", "answered"],
      ["reply", null],
    ]);
    expect(await store.listUnanswered()).toEqual([]);
    await store.close();
  });

  it("keeps deferred messages with their retry time, and schedules", async () => {
    const store = new SqliteGatewayStore(databasePath());
    const message = await store.insertUserMessage("c", "later", "http");
    const retryAt = new Date(Date.now() + 60_000).toISOString();
    const fallback = await store.settle({
      messageIds: [message.id],
      state: "deferred",
      reply: { kind: "fallback", text: "rate limit" },
      retryAt,
    });
    expect(fallback?.kind).toBe("fallback");
    expect(await store.listDeferred()).toEqual([
      expect.objectContaining({ id: message.id, retryAt }),
    ]);

    const schedule = await store.insertSchedule(
      { cron: "* * * * *", channelId: "c", prompt: "p" },
      null,
    );
    expect(schedule).toMatchObject({ paused: false, consecutiveFailures: 0, lastError: null });
    expect(
      await store.updateSchedule(schedule.id, {
        paused: true,
        consecutiveFailures: 3,
        lastError: "x",
      }),
    ).toMatchObject({ paused: true, consecutiveFailures: 3, lastError: "x" });
    expect(await store.deleteSchedule(schedule.id)).toBe(true);
    expect(await store.deleteSchedule(schedule.id)).toBe(false);
    const notice = await store.insertSystemMessage("c", "note");
    expect(notice).toMatchObject({ role: "system", state: null });
    await store.close();
  });
});
