import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it } from "vitest";
import {
  migrations as postgresMigrations,
  schemaVersion as postgresSchemaVersion,
} from "../../../src/gateway/store/postgres/migrations.js";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import {
  migrate,
  migrations,
  schemaVersion,
} from "../../../src/gateway/store/sqlite/migrations.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";
import { storeAdapters } from "./store-adapters.js";

/** A user message as a rudder before attachments stored it: its image a marker line. */
const LEGACY_TEXT = "look\n[attached image: inbox/old.png]\n[attached image: inbox/a.pdf]";
const LEGACY_INSERTS = [
  "INSERT INTO channels (id, created_at, last_activity_at) VALUES ('old', $1, $1)",
  `INSERT INTO messages (id, channel_id, role, kind, text, state, source, created_at, updated_at)
     VALUES ('m1', 'old', 'user', 'user', $2, 'received', 'http', $1, $1),
            ('m2', 'old', 'user', 'user', 'typed: [attached image: inbox/x.png] inline', 'received', 'http', $1, $1)`,
];
/** What the migration reads of them: the marker alone on its line, of an image type. */
const LEGACY_READ = [{ kind: "image", path: "inbox/old.png", mediaType: "image/png" }];

const { adapters, databasePath, postgres } = storeAdapters();

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
});

describe("the SQLite gateway store's attachments", () => {
  it("reads the image markers of messages stored before into their attachments, once", async () => {
    const path = databasePath();
    const before = migrations.findIndex((step) => typeof step === "function");
    mkdirSync(dirname(path), { recursive: true });
    const database = new Database(path);
    for (const step of migrations.slice(0, before)) database.exec(step as string);
    database.pragma(`user_version = ${before}`);
    const at = "2026-01-01T00:00:00.000Z";
    for (const sql of LEGACY_INSERTS) {
      database.prepare(sql.replaceAll("$1", "@at").replaceAll("$2", "@text")).run({
        at,
        text: LEGACY_TEXT,
      });
    }
    database.close();
    const store = new SqliteGatewayStore(path);
    const [old, typed] = await store.listUnanswered();
    expect(old).toMatchObject({ text: LEGACY_TEXT, attachments: LEGACY_READ });
    expect(typed?.attachments).toBeUndefined();
    await store.close();
  });
});

describe("the PostgreSQL gateway store", () => {
  it("reads the image markers of messages stored before into their attachments, once", async () => {
    const url = await (await postgres()).createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const before = postgresMigrations.findIndex((step) => typeof step === "function");
      await client.query(
        "CREATE TABLE rudder_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      for (const [index, step] of postgresMigrations.slice(0, before).entries()) {
        await client.query(step as string);
        await client.query("INSERT INTO rudder_schema (version) VALUES ($1)", [index + 1]);
      }
      await client.query(LEGACY_INSERTS[0] as string, [new Date()]);
      await client.query(LEGACY_INSERTS[1] as string, [new Date(), LEGACY_TEXT]);
    } finally {
      await client.end();
    }
    const store = await PostgresGatewayStore.open(url);
    const [old, typed] = await store.listUnanswered();
    expect(old).toMatchObject({ text: LEGACY_TEXT, attachments: LEGACY_READ });
    expect(typed?.attachments).toBeUndefined();
    await store.close();
  });

  it("migrates a new database once, even when workers open it together, and refuses a newer one", async () => {
    const url = await (await postgres()).createDatabase();
    const stores = await Promise.all([1, 2, 3].map(() => PostgresGatewayStore.open(url)));
    await stores[0]?.insertUserMessage("c", "hello", "http");
    await Promise.all(stores.map((store) => store.close()));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT version FROM rudder_schema ORDER BY version");
      expect(rows.map((row) => row.version)).toEqual(
        Array.from({ length: postgresSchemaVersion }, (_, index) => index + 1),
      );
      const reopened = await PostgresGatewayStore.open(url);
      expect((await reopened.listMessages("c")).map((message) => message.text)).toEqual(["hello"]);
      await reopened.close();
      await client.query("INSERT INTO rudder_schema (version) VALUES ($1)", [
        postgresSchemaVersion + 1,
      ]);
      await expect(PostgresGatewayStore.open(url)).rejects.toThrow(/newer than this rudder/);
    } finally {
      await client.end();
    }
  });

  it("keeps one API token for every worker: the first one stored", async () => {
    const url = await (await postgres()).createDatabase();
    const [first, second] = await Promise.all([
      PostgresGatewayStore.open(url),
      PostgresGatewayStore.open(url),
    ]);
    const tokens = await Promise.all([
      first!.sharedToken("token-of-a"),
      second!.sharedToken("token-of-b"),
    ]);
    expect(tokens[0]).toBe(tokens[1]);
    expect(["token-of-a", "token-of-b"]).toContain(tokens[0]);
    expect(await second!.sharedToken("token-of-c")).toBe(tokens[0]);
    await first!.close();
    await second!.close();
  });

  it("names the unreachable database with its password hidden", async () => {
    const { port } = await postgres();
    const url = `postgres://rudder:hunter2@127.0.0.1:${port + 1}/nowhere`;
    const failure = await PostgresGatewayStore.open(url, { connectTimeoutMs: 5000 }).catch(
      (error: Error) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).name).toBe("StoreUnavailableError");
    expect((failure as Error).message).toContain(
      `postgres://rudder:***@127.0.0.1:${port + 1}/nowhere`,
    );
    expect((failure as Error).message).toMatch(/ECONNREFUSED/);
    expect((failure as Error).message).not.toContain("hunter2");
  });
});

describe.each(adapters)("the $name gateway store", (adapter) => {
  it("keeps a user message's attachments in its row, and none for one without", async () => {
    const store = await adapter.open();
    const attachments = [
      { kind: "image" as const, path: "inbox/shot.png", mediaType: "image/png", size: 70 },
      { kind: "file" as const, path: "inbox/a.pdf", mediaType: "application/pdf", size: 9 },
    ];
    const sent = await store.insertUserMessage("chan", "look", "http", "run-1", attachments);
    const plain = await store.insertUserMessage("chan", "[attached image: inbox/x.png]", "http");
    expect(sent.attachments).toEqual(attachments);
    expect(await store.getMessage(sent.id)).toEqual(sent);
    const listed = await store.listMessages("chan");
    expect(listed.map((message) => message.attachments)).toEqual([attachments, undefined]);
    expect(await store.getMessage(plain.id)).toEqual(plain);
    await store.close();
  });

  it("keeps what the page showed of a turn and the files it sent with the reply that ended it, in the same write, once", async () => {
    const store = await adapter.open();
    const asked = await store.insertUserMessage("chan", "do it", "http");
    const files = [
      { path: "out/chart.png", name: "chart.png", mediaType: "image/png", size: 9, caption: "c" },
    ];
    const answer = await store.settle({
      messageIds: [asked.id],
      state: "answered",
      reply: { kind: "reply", text: "done" },
      display: '{"events":[1]}',
      files,
    });
    if (answer === null) throw new Error("not settled");
    expect(answer.files).toEqual(files);
    expect(await store.getMessage(answer.id)).toEqual(answer);
    expect((await store.listMessages("chan")).at(-1)?.files).toEqual(files);
    // Settled again (another worker, a replay): nothing is answered twice or replaced.
    const again = await store.settle({
      messageIds: [asked.id],
      state: "answered",
      reply: { kind: "reply", text: "done again" },
      display: '{"events":[2]}',
    });
    expect(again).toBeNull();
    const displays = store.turnDisplays();
    expect(await displays.list([answer.id, "unknown"])).toEqual(
      new Map([[answer.id, '{"events":[1]}']]),
    );
    // A settlement without one keeps none.
    const plain = await store.insertUserMessage("chan", "and this", "http");
    const bare = await store.settle({
      messageIds: [plain.id],
      state: "failed",
      reply: { kind: "error", text: "no" },
    });
    expect(await displays.list([bare?.id ?? ""])).toEqual(new Map());
    expect(await displays.list([])).toEqual(new Map());
    await store.close();
  });

  it("removes a channel whole (messages, turns, transcripts, grants) but its spend, which stays counted", async () => {
    const store = await adapter.open();
    const since = new Date(Date.now() - 60_000).toISOString();
    const asked = await store.insertUserMessage("gone", "hello", "http");
    await store.settle({
      messageIds: [asked.id],
      state: "answered",
      reply: { kind: "reply", text: "hi" },
      display: "{}",
      turn: {
        ...{ result: "hi", costUsd: 0.25, usage: null, durationMs: 1, numTurns: 1 },
        ...{ isError: false, subtype: "success", sessionId: "s-gone", binding: "b" },
        ...{ inputTokens: 10, outputTokens: 5 },
      },
    });
    await store.putSpend({
      ...{ id: "wake-1", channelId: "gone", binding: "b", kind: "wake" },
      ...{ costUsd: 0.5, inputTokens: 1, outputTokens: 1 },
    });
    await store.appendTranscript({
      ...{ sessionId: "s-gone", channelId: "gone", offset: 0 },
      bytes: Buffer.from("{}\n"),
    });
    await store.sourceStore().grants.add({
      ...{ channelId: "gone", toolName: "Bash", command: "ls", grantedBy: "p" },
    });
    await store.insertUserMessage("kept", "stay", "http");
    const spent = await store.spendSince(since);

    expect(await store.channelSettings().remove("gone")).toEqual({ messages: 2 });
    expect(await store.getChannel("gone")).toBeNull();
    expect(await store.listMessages("gone")).toEqual([]);
    expect(await store.getMessage(asked.id)).toBeNull();
    expect(await store.transcriptLength("s-gone")).toBe(0);
    expect(await store.sourceStore().grants.list("gone")).toEqual([]);
    expect(await store.spendSince(since)).toEqual(spent);
    expect(spent).toEqual([
      { channelId: "gone", binding: "b", costUsd: 0.75, inputTokens: 11, outputTokens: 6 },
    ]);
    expect((await store.listMessages("kept")).map((message) => message.text)).toEqual(["stay"]);
    expect(await store.channelSettings().remove("gone")).toBeNull();
    // A message to the same id makes the channel anew.
    await store.insertUserMessage("gone", "again", "http");
    expect((await store.listMessages("gone")).map((message) => message.text)).toEqual(["again"]);
    await store.close();
  });

  it("keeps channels, message states and delivery counts (once per gateway run), in order", async () => {
    const store = await adapter.open();
    const first = await store.insertUserMessage("chan", "one", "http");
    const second = await store.insertUserMessage("chan", "two", "schedule:x");
    expect(first).toMatchObject({
      channelId: "chan",
      role: "user",
      kind: "user",
      state: "received",
      attempts: 0,
      deliveries: 0,
    });
    await store.setMessageState(first.id, "received", "run-1");
    await store.countStarted(first.id, "run-1");
    // The same run again (a steer dispatched anew) counts nothing more.
    await store.setMessageState(first.id, "received", "run-1");
    await store.countStarted(first.id, "run-1");
    await store.setMessageState(first.id, "received", "run-2");
    await store.setMessageState(second.id, "steered", "run-2");
    await store.setMessageState(second.id, "steered");
    expect(
      (await store.listUnanswered()).map((message) => [
        message.text,
        message.state,
        message.deliveries,
        message.attempts,
      ]),
    ).toEqual([
      ["one", "received", 2, 1],
      ["two", "steered", 1, 0],
    ]);
    await store.setChannelSession("chan", "session-1");
    expect(await store.getChannel("chan")).toMatchObject({ id: "chan", sessionId: "session-1" });
    expect((await store.listChannels()).map((channel) => channel.id)).toEqual(["chan"]);
    expect((await store.listMessages("chan", 1)).map((message) => message.text)).toEqual(["two"]);
    await store.close();
  });

  it("counts a message handed over as it is stored, once for that run", async () => {
    const store = await adapter.open();
    const handed = await store.insertUserMessage("chan", "at once", "http", "run-1");
    const kept = await store.insertUserMessage("chan", "later", "http");
    expect(handed).toMatchObject({ state: "received", deliveries: 1, attempts: 0 });
    expect(kept.deliveries).toBe(0);
    // The run that stored it hands it over again (a steer, a retry): nothing more is counted.
    await store.setMessageState(handed.id, "steered", "run-1");
    expect(await store.getMessage(handed.id)).toMatchObject({ state: "steered", deliveries: 1 });
    await store.setMessageState(handed.id, "received", "run-2");
    expect((await store.getMessage(handed.id))?.deliveries).toBe(2);
    expect((await store.getMessage(kept.id))?.deliveries).toBe(0);
    await store.close();
  });

  it("settles a group of messages once: a second settlement answers nothing", async () => {
    const store = await adapter.open();
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
      answers: [first.id, second.id],
    });
    // Linked to each message it answers, as a read gives it back too.
    expect(await store.getMessage(reply!.id)).toEqual(reply);
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

  it("returns each inserted and settled message as a read of it gives it back", async () => {
    const store = await adapter.open();
    const user = await store.insertUserMessage("same", "hello", "http");
    expect(await store.getMessage(user.id)).toEqual(user);
    const notice = await store.insertSystemMessage("same", "a notice", "error");
    expect(await store.getMessage(notice.id)).toEqual(notice);
    const said = await store.insertAgentMessage("same", "between turns", "reply");
    expect(await store.getMessage(said.id)).toEqual(said);
    const reply = await store.settle({
      messageIds: ["unknown", user.id],
      state: "answered",
      reply: { kind: "reply", text: "hi" },
    });
    expect(reply).toMatchObject({ replyTo: user.id, channelId: "same", kind: "reply" });
    expect(reply).not.toHaveProperty("answers");
    expect(await store.getMessage(reply!.id)).toEqual(reply);
    await store.close();
  });

  it("stores the context usage given with a settlement, and leaves it alone without", async () => {
    const store = await adapter.open();
    const first = await store.insertUserMessage("ctx", "one", "http");
    await store.setChannelContext("ctx", { tokens: 10, window: 100 });
    await store.settle({
      messageIds: [first.id],
      state: "answered",
      reply: { kind: "reply", text: "a" },
      context: { tokens: 1500, window: 200_000 },
    });
    expect((await store.getChannel("ctx"))?.context).toEqual({ tokens: 1500, window: 200_000 });
    const second = await store.insertUserMessage("ctx", "two", "http");
    await store.settle({
      messageIds: [second.id],
      state: "answered",
      reply: { kind: "reply", text: "b" },
    });
    expect((await store.getChannel("ctx"))?.context).toEqual({ tokens: 1500, window: 200_000 });
    const third = await store.insertUserMessage("ctx", "three", "http");
    await store.settle({
      messageIds: [third.id],
      state: "answered",
      reply: { kind: "reply", text: "c" },
      context: null,
    });
    expect((await store.getChannel("ctx"))?.context).toBeNull();
    // Nothing is written for a message already answered, the context neither.
    await store.settle({
      messageIds: [third.id],
      state: "answered",
      reply: { kind: "reply", text: "again" },
      context: { tokens: 9, window: 9 },
    });
    expect((await store.getChannel("ctx"))?.context).toBeNull();
    await store.close();
  });

  it("keeps deferred messages with their retry time, and schedules", async () => {
    const store = await adapter.open();
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

  it("answers a message settled by two callers at once exactly once", async () => {
    const store = await adapter.open();
    const message = await store.insertUserMessage("c", "once", "http");
    const replies = await Promise.all(
      ["first", "second", "third"].map((text) =>
        store.settle({
          messageIds: [message.id],
          state: "answered",
          reply: { kind: "reply", text },
        }),
      ),
    );
    expect(replies.filter((reply) => reply !== null)).toHaveLength(1);
    expect((await store.listMessages("c")).map((stored) => stored.kind)).toEqual(["user", "reply"]);
    await store.close();
  });

  it("round-trips times, context usage and unknown ids, and orders channels by activity", async () => {
    const store = await adapter.open();
    expect(await store.getMessage("not-an-id")).toBeNull();
    expect(await store.getChannel("nobody")).toBeNull();
    expect(await store.getSchedule("nothing")).toBeNull();
    await store.insertUserMessage("older", "a", "http");
    await new Promise((resolve) => setTimeout(resolve, 5));
    const newest = await store.insertUserMessage("newer", "b", "http");
    expect((await store.listChannels()).map((channel) => channel.id)).toEqual(["newer", "older"]);
    expect(Number.isNaN(Date.parse(newest.createdAt))).toBe(false);
    await store.setChannelContext("newer", { tokens: 1200, window: 200_000 });
    expect((await store.getChannel("newer"))?.context).toEqual({ tokens: 1200, window: 200_000 });
    await store.setChannelContext("newer", null);
    expect((await store.getChannel("newer"))?.context).toBeNull();
    await store.setChannelSession("newer", "s-1");
    await store.setChannelSession("newer", null);
    expect((await store.getChannel("newer"))?.sessionId).toBeNull();
    const nextRunAt = "2030-01-02T03:04:05.678Z";
    const schedule = await store.insertSchedule(
      { cron: "0 * * * *", channelId: "newer", prompt: "p" },
      nextRunAt,
    );
    expect(schedule.nextRunAt).toBe(nextRunAt);
    const lastRunAt = "2030-01-02T02:04:05.000Z";
    expect(await store.updateSchedule(schedule.id, { lastRunAt, nextRunAt: null })).toMatchObject({
      lastRunAt,
      nextRunAt: null,
    });
    expect(await store.updateSchedule(schedule.id, {})).toMatchObject({ lastRunAt });
    expect(await store.updateSchedule("nothing", { paused: true })).toBeNull();
    expect((await store.listSchedules()).map((each) => each.id)).toEqual([schedule.id]);
    const agent = await store.insertAgentMessage("newer", "woke up", "reply");
    expect(agent).toMatchObject({ role: "assistant", kind: "reply", replyTo: null, state: null });
    await store.close();
  });
});
