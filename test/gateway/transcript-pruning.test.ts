/**
 * Stored transcripts stay bounded, driven through a gateway on PostgreSQL with rudder agents: a
 * long session's chunks are merged into one past the count (restoring the same file), `/clear`
 * deletes the chunks of the session the channel left, and the periodic prune deletes those of a
 * session no channel uses once they are old, and nothing a channel uses.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  echoFallback,
  type FakeMessagesApi,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { FAKE_CLAUDE, RUDDER_BIN } from "../helpers/fixtures.js";
import { type PostgresCluster, startPostgresCluster } from "../helpers/postgres-cluster.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

let cluster: PostgresCluster;
let api: FakeMessagesApi;
const gateways: TestGateway[] = [];
const folders: string[] = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
  api = await startFakeMessagesApi({ fallback: echoFallback });
}, 60_000);
afterAll(async () => {
  await Promise.allSettled(gateways.map((gateway) => gateway.cleanup()));
  await api?.close();
  await cluster?.destroy();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

interface Rows {
  rows: number;
  bytes: Buffer;
}

describe("stored transcripts on a gateway", () => {
  it("merge past the count, go with /clear, and are pruned once no channel uses them", async () => {
    const url = await cluster.createDatabase();
    const workspace = mkdtempSync(join(tmpdir(), "rudder-transcript-pruning-"));
    folders.push(workspace);
    const sessions = join(workspace, ".rudder-home", "sessions");
    // Rudder agents, whose session files the gateway knows.
    const worker = await startTestGateway({
      prefix: "transcript-pruning",
      store: { kind: "postgres", url },
      workerName: "pruner",
      transcripts: { compactAfter: 3, pruneEveryMs: 200, keepUnusedMs: 60_000 },
      engine: {
        claudeBin: RUDDER_BIN,
        cwd: workspace,
        env: {
          ANTHROPIC_BASE_URL: api.url,
          ANTHROPIC_API_KEY: "dummy",
          RUDDER_HOME: join(workspace, ".rudder-home"),
          RUDDER_MAX_RETRIES: "0",
        },
        sessionFile: (sessionId) => join(sessions, `${sessionId}.jsonl`),
      },
    });
    gateways.push(worker);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const stored = async (sessionId: string): Promise<Rows> => {
      const { rows } = await client.query<{ bytes: Buffer }>(
        "SELECT bytes FROM transcript_chunks WHERE session_id = $1 ORDER BY start_offset",
        [sessionId],
      );
      return { rows: rows.length, bytes: Buffer.concat(rows.map((row) => row.bytes)) };
    };
    const ask = async (channel: string, text: string) => {
      const posted = await worker.api<{ id: string }>("POST", `/api/channels/${channel}/messages`, {
        text,
      });
      expect(posted.status).toBe(202);
      const answer = await waitFor(
        async () => (await worker.messages(channel)).find((m) => m.replyTo === posted.body.id),
        `the answer to ${text}`,
        60_000,
      );
      expect(answer.kind, answer.text).toBe("reply");
    };
    const sessionOf = async (channel: string) =>
      (
        await worker.api<{ channels: Array<{ id: string; sessionId: string | null }> }>(
          "GET",
          "/api/channels",
        )
      ).body.channels.find((each) => each.id === channel)?.sessionId ?? null;

    try {
      const rowsAfter: number[] = [];
      for (let turn = 1; turn <= 6; turn++) {
        await ask("long", `turn ${turn}`);
        rowsAfter.push((await stored((await sessionOf("long"))!)).rows);
      }
      const first = (await sessionOf("long"))!;
      // Never past the count plus the chunk that triggers the merge, and merged at least once.
      expect(Math.max(...rowsAfter)).toBeLessThanOrEqual(3);
      expect(rowsAfter.length).toBe(6);
      const file = readFileSync(join(sessions, `${first}.jsonl`));
      expect((await stored(first)).bytes.equals(file)).toBe(true);
      expect(file.toString()).toContain("turn 6");

      // Another channel's session, and sessions no channel uses: one old, one recent.
      await ask("other", "hello");
      const other = (await sessionOf("other"))!;
      for (const [sessionId, age] of [
        ["orphan-old", "2 hours"],
        ["orphan-recent", "1 second"],
      ]) {
        await client.query(
          `INSERT INTO transcript_chunks (session_id, start_offset, end_offset, channel_id, bytes, created_at)
           VALUES ($1, 0, 3, 'gone', '\\x7b7d0a'::bytea, now() - $2::interval)`,
          [sessionId, age],
        );
      }
      await waitFor(
        async () => (await stored("orphan-old")).rows === 0,
        "the old unused session pruned",
      );
      expect((await stored("orphan-recent")).rows).toBe(1);
      expect((await stored(first)).rows).toBeGreaterThan(0);
      expect((await stored(other)).rows).toBeGreaterThan(0);

      // /clear: the session the channel left is deleted at once; the next one is stored.
      const reset = await worker.api<{ previousSessionId: string }>(
        "POST",
        "/api/channels/long/reset",
      );
      expect(reset.body.previousSessionId).toBe(first);
      expect((await stored(first)).rows).toBe(0);
      await ask("long", "a new conversation");
      const second = (await sessionOf("long"))!;
      expect(second).not.toBe(first);
      expect((await stored(second)).rows).toBeGreaterThan(0);
      expect((await stored(other)).rows).toBeGreaterThan(0);
      expect((await stored(first)).rows).toBe(0);
    } finally {
      await client.end();
    }
  }, 120_000);

  it("keeps the chunks of a channel's first turn however long it stays silent", async () => {
    const url = await cluster.createDatabase();
    const folder = mkdtempSync(join(tmpdir(), "rudder-transcript-first-turn-"));
    folders.push(folder);
    const session = "first-turn-session";
    // The session file as the agent writes it when its first turn begins.
    writeFileSync(join(folder, `${session}.jsonl`), '{"type":"user","text":"hello"}\n');
    const worker = await startTestGateway({
      prefix: "transcript-first-turn",
      store: { kind: "postgres", url },
      workerName: "silent",
      // The default wait of a day, with every look at it soon after another.
      transcripts: { pruneEveryMs: 100 },
      engine: {
        claudeBin: FAKE_CLAUDE,
        // The first turn says one thing and then nothing until SIGUSR2.
        env: { FAKE_CLAUDE_SCENARIO: "hold", FAKE_CLAUDE_SESSION_ID: session },
        sessionFile: (sessionId) => join(folder, `${sessionId}.jsonl`),
      },
    });
    gateways.push(worker);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const chunks = async (sessionId: string) =>
      Number(
        (
          await client.query<{ count: string }>(
            "SELECT count(*) FROM transcript_chunks WHERE session_id = $1",
            [sessionId],
          )
        ).rows[0]?.count,
      );
    try {
      const posted = await worker.api("POST", "/api/channels/quiet/messages", { text: "hello" });
      expect(posted.status).toBe(202);
      await waitFor(async () => (await chunks(session)) > 0, "the first turn's chunks stored");
      // A day and more of silence: nothing stored since, the channel inactive since.
      await client.query(
        "UPDATE transcript_chunks SET created_at = now() - interval '2 days' WHERE session_id = $1",
        [session],
      );
      await client.query(
        "UPDATE channels SET last_activity_at = now() - interval '2 days' WHERE id = 'quiet'",
      );
      // A session no channel uses, as old: once it is gone, a look ran after the ageing.
      await client.query(
        `INSERT INTO transcript_chunks (session_id, start_offset, end_offset, channel_id, bytes, created_at)
         VALUES ('unused', 0, 3, 'gone', '\\x7b7d0a'::bytea, now() - interval '2 days')`,
      );
      await waitFor(async () => (await chunks("unused")) === 0, "the unused session pruned");
      expect(await chunks(session)).toBeGreaterThan(0);
      // Because the channel names its session from the turn's first line, not from its end.
      const { rows } = await client.query<{ session_id: string | null }>(
        "SELECT session_id FROM channels WHERE id = 'quiet'",
      );
      expect(rows[0]?.session_id).toBe(session);
      expect((await worker.messages("quiet")).some((m) => m.replyTo !== null)).toBe(false);
    } finally {
      await client.end();
    }
  }, 60_000);
});
