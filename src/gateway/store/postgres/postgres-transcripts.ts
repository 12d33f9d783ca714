import type pg from "pg";
import {
  mergeRun,
  type NewTranscriptChunk,
  SESSION_FILE,
  type StoredTranscriptFile,
  type TranscriptChunk,
  type TranscriptMerge,
} from "../transcript-chunks.js";

/** True unless another worker holds channel `$1`'s lease (`$2`: this worker, null unfenced). */
const NOT_FENCED = `($2::text IS NULL
  OR NOT EXISTS (SELECT 1 FROM leases WHERE channel_id = $1 AND owner <> $2))`;

/**
 * The `transcript_chunks` table of the PostgreSQL store (see `TranscriptChunks`). Appends,
 * rewrites and merges are fenced like settlements: a worker that lost a channel's lease stores
 * nothing more of its session, so the new owner's chunks are the ones kept.
 */
export class PostgresTranscripts {
  readonly #pool: pg.Pool;
  readonly #worker: () => string | undefined;

  constructor(pool: pg.Pool, worker: () => string | undefined) {
    this.#pool = pool;
    this.#worker = worker;
  }

  async append(
    chunk: NewTranscriptChunk,
    client: pg.Pool | pg.PoolClient = this.#pool,
  ): Promise<boolean> {
    const result = await client.query(
      `INSERT INTO transcript_chunks
         (session_id, file, start_offset, end_offset, channel_id, bytes)
       SELECT $3, $4, $5, $6, $1, $7 WHERE ${NOT_FENCED}
       ON CONFLICT DO NOTHING`,
      [
        chunk.channelId,
        this.#worker() ?? null,
        chunk.sessionId,
        chunk.file ?? SESSION_FILE,
        chunk.offset,
        chunk.offset + chunk.bytes.length,
        chunk.bytes,
      ],
    );
    return (result.rowCount ?? 0) > 0;
  }

  replace(sessionId: string, channelId: string, bytes: Buffer, file: string): Promise<boolean> {
    return this.#transaction(async (client) => {
      await client.query("DELETE FROM transcript_chunks WHERE session_id = $1 AND file = $2", [
        sessionId,
        file,
      ]);
      // Fenced by the insert: when it stores nothing, the delete is rolled back.
      return this.append({ sessionId, channelId, offset: 0, bytes, file }, client);
    });
  }

  async chunks(sessionId: string, after: number, file: string): Promise<TranscriptChunk[]> {
    const { rows } = await this.#pool.query<{ start_offset: string; bytes: Buffer }>(
      `SELECT start_offset, bytes FROM transcript_chunks
       WHERE session_id = $1 AND file = $2 AND end_offset > $3 ORDER BY start_offset`,
      [sessionId, file, after],
    );
    return rows.map((row) => ({ offset: Number(row.start_offset), bytes: row.bytes }));
  }

  async length(sessionId: string, file: string): Promise<number> {
    const { rows } = await this.#pool.query<{ end_offset: string }>(
      `SELECT end_offset FROM transcript_chunks WHERE session_id = $1 AND file = $2
       ORDER BY start_offset DESC LIMIT 1`,
      [sessionId, file],
    );
    return rows[0] === undefined ? 0 : Number(rows[0].end_offset);
  }

  async files(sessionId: string): Promise<StoredTranscriptFile[]> {
    const { rows } = await this.#pool.query<{ file: string; length: string; chunks: string }>(
      `SELECT file, max(end_offset) AS length, count(*) AS chunks FROM transcript_chunks
       WHERE session_id = $1 GROUP BY file ORDER BY file COLLATE "C"`,
      [sessionId],
    );
    return rows.map((row) => ({
      file: row.file,
      length: Number(row.length),
      chunks: Number(row.chunks),
    }));
  }

  /**
   * The chunks are locked, then the run (`mergeRun`) merged in the database (its bytes never
   * travel): its first row takes every byte up to the newest offset, the others are deleted.
   */
  async compact(
    sessionId: string,
    channelId: string,
    file: string,
  ): Promise<TranscriptMerge | undefined> {
    let merge: TranscriptMerge | undefined;
    await this.#transaction(async (client) => {
      const { rows } = await client.query<{ start: string; end: string }>(
        `SELECT start_offset AS start, end_offset AS end FROM transcript_chunks
         WHERE session_id = $1 AND file = $2 ORDER BY start_offset FOR UPDATE`,
        [sessionId, file],
      );
      const parts = rows.map((row) => ({ start: Number(row.start), end: Number(row.end) }));
      const run = mergeRun(parts);
      if (run === undefined) return false;
      const merged = await client.query(
        `UPDATE transcript_chunks SET end_offset = $6, created_at = now(),
           bytes = (SELECT string_agg(part.bytes, ''::bytea ORDER BY part.start_offset)
                    FROM transcript_chunks part
                    WHERE part.session_id = $3 AND part.file = $4 AND part.start_offset >= $5)
         WHERE session_id = $3 AND file = $4 AND start_offset = $5 AND ${NOT_FENCED}`,
        [channelId, this.#worker() ?? null, sessionId, file, run.from, run.end],
      );
      if (merged.rowCount !== 1) return false;
      await client.query(
        `DELETE FROM transcript_chunks
         WHERE session_id = $1 AND file = $2 AND start_offset > $3 AND start_offset < $4`,
        [sessionId, file, run.from, run.end],
      );
      merge = { chunks: parts.length - run.merged + 1, bytes: run.end - run.from };
      return true;
    });
    return merge;
  }

  async forget(sessionId: string): Promise<number> {
    const result = await this.#pool.query(
      `DELETE FROM transcript_chunks WHERE session_id = $1
         AND NOT EXISTS (SELECT 1 FROM channels WHERE session_id = $1)`,
      [sessionId],
    );
    return result.rowCount ?? 0;
  }

  async prune(storedBefore: Date): Promise<number> {
    const result = await this.#pool.query(
      `WITH sessions AS (
         SELECT session_id, max(channel_id) AS channel_id, max(created_at) AS newest
         FROM transcript_chunks GROUP BY session_id)
       DELETE FROM transcript_chunks WHERE session_id IN (
         SELECT s.session_id FROM sessions s
         WHERE s.newest < $1
           AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.session_id = s.session_id)
           AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.id = s.channel_id
                             AND c.session_id IS NULL AND c.last_activity_at >= $1))`,
      [storedBefore],
    );
    return result.rowCount ?? 0;
  }

  /** Runs `work` in a transaction, committed when it resolves true, else rolled back. */
  async #transaction(work: (client: pg.PoolClient) => Promise<boolean>): Promise<boolean> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      const done = await work(client);
      await client.query(done ? "COMMIT" : "ROLLBACK");
      return done;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}
