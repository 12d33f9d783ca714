import type pg from "pg";
import type { NewTranscriptChunk, TranscriptChunk } from "../transcript-chunks.js";

/**
 * The `transcript_chunks` table of the PostgreSQL store (see `TranscriptChunks`). Appends are
 * fenced like settlements: a worker that lost a channel's lease stores nothing more of its
 * session, so the new owner's chunks are the ones kept.
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
      `INSERT INTO transcript_chunks (session_id, start_offset, end_offset, channel_id, bytes)
       SELECT $1, $2, $3, $4, $5
       WHERE $6::text IS NULL
         OR NOT EXISTS (SELECT 1 FROM leases WHERE channel_id = $4 AND owner <> $6)
       ON CONFLICT DO NOTHING`,
      [
        chunk.sessionId,
        chunk.offset,
        chunk.offset + chunk.bytes.length,
        chunk.channelId,
        chunk.bytes,
        this.#worker() ?? null,
      ],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async replace(sessionId: string, channelId: string, bytes: Buffer): Promise<boolean> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("DELETE FROM transcript_chunks WHERE session_id = $1", [sessionId]);
      // Fenced by the insert: when it stores nothing, the delete is rolled back.
      const stored = await this.append({ sessionId, channelId, offset: 0, bytes }, client);
      await client.query(stored ? "COMMIT" : "ROLLBACK");
      return stored;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async chunks(sessionId: string, after: number): Promise<TranscriptChunk[]> {
    const { rows } = await this.#pool.query<{ start_offset: string; bytes: Buffer }>(
      `SELECT start_offset, bytes FROM transcript_chunks WHERE session_id = $1 AND end_offset > $2
       ORDER BY start_offset`,
      [sessionId, after],
    );
    return rows.map((row) => ({ offset: Number(row.start_offset), bytes: row.bytes }));
  }

  async length(sessionId: string): Promise<number> {
    const { rows } = await this.#pool.query<{ end_offset: string }>(
      `SELECT end_offset FROM transcript_chunks WHERE session_id = $1
       ORDER BY start_offset DESC LIMIT 1`,
      [sessionId],
    );
    return rows[0] === undefined ? 0 : Number(rows[0].end_offset);
  }
}
