/**
 * Session files in the store (`TranscriptChunks`), on both adapters: append-only chunks of the
 * session file and of its side files (named by relative path), merged into one row past a
 * count, and deleted once no channel uses the session.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { migrations } from "../../../src/gateway/store/sqlite/migrations.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";
import type { GatewayStore } from "../../../src/gateway/store/store.js";
import { storeAdapters } from "./store-adapters.js";

const { adapters, databasePath, postgres } = storeAdapters();

const SIDE = "subagents/agent-a1.jsonl";

/** Appends `lines` to a file of the session as one chunk each, from where it ends. */
async function appendLines(
  store: GatewayStore,
  sessionId: string,
  lines: string[],
  options: { channelId?: string; file?: string } = {},
): Promise<void> {
  const file = options.file ?? "";
  for (const text of lines) {
    const offset = await store.transcriptLength(sessionId, file);
    const bytes = Buffer.from(`${text}\n`);
    const chunk = { sessionId, channelId: options.channelId ?? "c", offset, bytes, file };
    expect(await store.appendTranscript(chunk)).toBe(true);
  }
}

const whole = async (store: GatewayStore, sessionId: string, file = "") =>
  Buffer.concat((await store.transcriptChunks(sessionId, 0, file)).map((chunk) => chunk.bytes));

/** Resolves once the wall clock has moved past `time` (chunk times are the database's). */
async function clockPast(time: number): Promise<void> {
  while (Date.now() <= time + 5) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("the SQLite store's transcript chunks", () => {
  it("keeps the chunks a database stored before side files existed, as the session file", async () => {
    const path = databasePath();
    // A database as the store made it before the side files' step: only the steps before it
    // (so a later step added to the schema needs no change here), with a chunk stored then.
    const sideFiles = migrations.findIndex(
      (step) => typeof step === "string" && step.includes("transcript_files"),
    );
    mkdirSync(dirname(path), { recursive: true });
    const database = new Database(path);
    for (const step of migrations.slice(0, sideFiles)) database.exec(step as string);
    database.pragma(`user_version = ${sideFiles}`);
    database
      .prepare(
        `INSERT INTO transcript_chunks (session_id, start_offset, end_offset, channel_id, bytes, created_at)
         VALUES ('s', 0, 3, 'c', ?, '2026-01-01T00:00:00.000Z')`,
      )
      .run(Buffer.from("{}\n"));
    database.close();
    const store = new SqliteGatewayStore(path);
    expect(await store.transcriptFiles("s")).toEqual([{ file: "", length: 3, chunks: 1 }]);
    expect(await store.transcriptChunks("s")).toEqual([{ offset: 0, bytes: Buffer.from("{}\n") }]);
    await store.close();
  });
});

describe("the PostgreSQL store's transcript chunks", () => {
  it("stores no transcript chunk of a channel whose lease another worker holds", async () => {
    const url = await (await postgres()).createDatabase();
    const store = await PostgresGatewayStore.open(url);
    store.fence("stale");
    const chunk = (channelId: string) => ({
      sessionId: `s-${channelId}`,
      channelId,
      offset: 0,
      bytes: Buffer.from("line\n"),
    });
    const leases = store.channelLeases("stale", 15);
    expect(await leases.claim("mine")).toBe(true);
    expect(await store.appendTranscript(chunk("mine"))).toBe(true);
    const other = await PostgresGatewayStore.open(url);
    expect(await other.channelLeases("owner", 15).claim("taken")).toBe(true);
    expect(await store.appendTranscript(chunk("taken"))).toBe(false);
    expect(await store.replaceTranscript("s-taken", "taken", Buffer.from("x\n"))).toBe(false);
    expect(await store.transcriptLength("s-taken")).toBe(0);
    other.fence("owner");
    expect(await other.appendTranscript(chunk("taken"))).toBe(true);
    expect(await store.replaceTranscript("s-taken", "taken", Buffer.from("x\n"))).toBe(false);
    expect(await other.transcriptChunks("s-taken")).toEqual([
      { offset: 0, bytes: Buffer.from("line\n") },
    ]);
    // Nor merges its chunks: the owner's rows stay as the owner wrote them.
    expect(
      await other.appendTranscript({ ...chunk("taken"), offset: 5, bytes: Buffer.from("more\n") }),
    ).toBe(true);
    expect(await store.compactTranscript("s-taken", "taken")).toBeUndefined();
    expect(await other.transcriptChunks("s-taken")).toHaveLength(2);
    expect(await other.compactTranscript("s-taken", "taken")).toEqual({ chunks: 1, bytes: 10 });
    expect(await other.transcriptChunks("s-taken")).toEqual([
      { offset: 0, bytes: Buffer.from("line\nmore\n") },
    ]);
    await store.close();
    await other.close();
  });
});

describe.each(adapters)("the $name store's transcript chunks", (adapter) => {
  it("keeps a session file as append-only chunks at their offsets, bytes unchanged", async () => {
    const store = await adapter.open();
    expect(await store.transcriptChunks("s-1")).toEqual([]);
    expect(await store.transcriptLength("s-1")).toBe(0);
    const first = Buffer.from('{"type":"session"}\n');
    // Bytes as they are on disk, not text: a NUL, an invalid UTF-8 byte, a multi-byte character.
    const second = Buffer.concat([Buffer.from([0x00, 0xff]), Buffer.from("é\n")]);
    const chunk = (offset: number, bytes: Buffer) => ({
      sessionId: "s-1",
      channelId: "c",
      offset,
      bytes,
    });
    expect(await store.appendTranscript(chunk(0, first))).toBe(true);
    expect(await store.appendTranscript(chunk(first.length, second))).toBe(true);
    // A second writer at an offset already stored changes nothing.
    expect(await store.appendTranscript(chunk(first.length, Buffer.from("other\n")))).toBe(false);
    expect(await store.transcriptLength("s-1")).toBe(first.length + second.length);
    const chunks = await store.transcriptChunks("s-1");
    expect(chunks.map((each) => each.offset)).toEqual([0, first.length]);
    expect(
      Buffer.concat(chunks.map((each) => each.bytes)).equals(Buffer.concat([first, second])),
    ).toBe(true);
    expect(await store.transcriptChunks("s-2")).toEqual([]);
    // The chunks ending after a byte: what a worker compares with its own file's tail.
    expect(await store.transcriptChunks("s-1", first.length)).toEqual([
      { offset: first.length, bytes: second },
    ]);
    expect(await store.transcriptChunks("s-1", first.length - 1)).toHaveLength(2);
    expect(await store.transcriptChunks("s-1", first.length + second.length)).toEqual([]);

    // A file rewritten from the start replaces its chunks in one step.
    expect(await store.replaceTranscript("s-1", "c", Buffer.from("new\n"))).toBe(true);
    expect(await store.transcriptChunks("s-1")).toEqual([
      { offset: 0, bytes: Buffer.from("new\n") },
    ]);
    expect(await store.transcriptLength("s-1")).toBe(4);
    await store.close();
  });

  it("keeps a session's side files apart, each under its relative path", async () => {
    const store = await adapter.open();
    await appendLines(store, "s", ['{"main":1}', '{"main":2}']);
    await appendLines(store, "s", ['{"side":1}'], { file: SIDE });
    const meta = Buffer.from('{"agentType":"general-purpose"}');
    const metaFile = "subagents/agent-a1.meta.json";
    expect(await store.replaceTranscript("s", "c", meta, metaFile)).toBe(true);
    expect(await store.transcriptFiles("s")).toEqual([
      { file: "", length: 22, chunks: 2 },
      { file: SIDE, length: 11, chunks: 1 },
      { file: metaFile, length: meta.length, chunks: 1 },
    ]);
    // Rewriting one file leaves the others alone.
    expect(await store.replaceTranscript("s", "c", Buffer.from('{"side":0}\n'), SIDE)).toBe(true);
    expect((await whole(store, "s")).toString()).toBe('{"main":1}\n{"main":2}\n');
    expect((await whole(store, "s", SIDE)).toString()).toBe('{"side":0}\n');
    expect(await store.transcriptLength("s", metaFile)).toBe(meta.length);
    expect(await store.transcriptFiles("other")).toEqual([]);
    await store.close();
  });

  it("merges a file's newest run of chunks into one up to the newest offset, bytes unchanged", async () => {
    const store = await adapter.open();
    const lines = Array.from({ length: 6 }, (_, index) => JSON.stringify({ index }));
    await appendLines(store, "s", lines);
    await appendLines(store, "s", ['{"side":1}', '{"side":2}'], { file: SIDE });
    const before = await whole(store, "s");
    // Chunks of one size: all of them are the run.
    expect(await store.compactTranscript("s", "c")).toEqual({ chunks: 1, bytes: before.length });
    expect(await store.transcriptChunks("s")).toEqual([{ offset: 0, bytes: before }]);
    expect(await store.transcriptLength("s")).toBe(before.length);
    // Only that file: the side file keeps its two chunks.
    expect((await store.transcriptFiles("s")).map((file) => file.chunks)).toEqual([1, 2]);
    // One chunk is nothing to merge; nor is a newest chunk smaller than the one before it.
    expect(await store.compactTranscript("s", "c")).toBeUndefined();
    await appendLines(store, "s", ['{"a":1}']);
    expect(await store.compactTranscript("s", "c")).toBeUndefined();
    // Grown past the merged chunk's size, the small ones after it join it.
    const more = Array.from({ length: 6 }, (_, index) => JSON.stringify({ more: index }));
    await appendLines(store, "s", more.slice(0, 2));
    expect(await store.compactTranscript("s", "c")).toEqual({ chunks: 2, bytes: 30 });
    expect((await store.transcriptChunks("s")).map((chunk) => chunk.offset)).toEqual([
      0,
      before.length,
    ]);
    await appendLines(store, "s", more.slice(2));
    expect(await store.compactTranscript("s", "c")).toMatchObject({ chunks: 1 });
    expect((await whole(store, "s")).toString()).toBe(
      `${[...lines, '{"a":1}', ...more].join("\n")}\n`,
    );
    // A gap ends the run: what is before it is left as it is, for a restore to report.
    await appendLines(store, "gap", ['{"a":1}']);
    const far = { sessionId: "gap", channelId: "c", offset: 100, bytes: Buffer.from("{}\n") };
    expect(await store.appendTranscript(far)).toBe(true);
    expect(await store.compactTranscript("gap", "c")).toBeUndefined();
    expect(await store.transcriptChunks("gap")).toHaveLength(2);
    expect(await store.compactTranscript("nothing", "c")).toBeUndefined();
    await store.close();
  });

  it("forgets a session's files once no channel names it", async () => {
    const store = await adapter.open();
    await store.insertUserMessage("c", "hello", "http");
    await store.setChannelSession("c", "s");
    await appendLines(store, "s", ['{"a":1}', '{"a":2}']);
    await appendLines(store, "s", ['{"side":1}'], { file: SIDE });
    expect(await store.forgetTranscript("s")).toBe(0);
    expect(await store.transcriptFiles("s")).toHaveLength(2);
    await store.setChannelSession("c", null);
    expect(await store.forgetTranscript("s")).toBe(3);
    expect(await store.transcriptFiles("s")).toEqual([]);
    await store.close();
  });

  it("prunes the sessions no channel uses, and only those", async () => {
    const store = await adapter.open();
    for (const channel of ["named", "moved-on", "fresh-start"]) {
      await store.insertUserMessage(channel, "hello", "http");
    }
    await store.setChannelSession("named", "s-named");
    await store.setChannelSession("moved-on", "s-new");
    await appendLines(store, "s-named", ['{"a":1}'], { channelId: "named" });
    await appendLines(store, "s-old", ['{"a":1}', '{"a":2}'], { channelId: "moved-on" });
    await appendLines(store, "s-old", ['{"side":1}'], { channelId: "moved-on", file: SIDE });
    await appendLines(store, "s-gone", ['{"a":1}'], { channelId: "deleted-channel" });
    // A channel whose first turn of a new conversation runs: its session is not named yet.
    await appendLines(store, "s-first", ['{"a":1}'], { channelId: "fresh-start" });
    await clockPast(Date.now());
    const cutoff = Date.now();
    await clockPast(cutoff);
    await store.insertUserMessage("fresh-start", "a new conversation", "http");
    await appendLines(store, "s-recent", ['{"a":1}'], { channelId: "moved-on" });

    expect(await store.pruneTranscripts(new Date(cutoff))).toBe(4);
    for (const kept of ["s-named", "s-first", "s-recent"]) {
      expect(await store.transcriptFiles(kept)).toHaveLength(1);
    }
    for (const gone of ["s-old", "s-gone"]) expect(await store.transcriptFiles(gone)).toEqual([]);
    expect(await store.pruneTranscripts(new Date(cutoff))).toBe(0);
    await store.close();
  });
});
