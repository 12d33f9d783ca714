import type Database from "better-sqlite3";
import {
  mergeRun,
  type NewTranscriptChunk,
  SESSION_FILE,
  type StoredTranscriptFile,
  type TranscriptChunk,
  type TranscriptMerge,
} from "../transcript-chunks.js";

/** The `transcript_chunks` table of a SQLite store (see `TranscriptChunks`). */
export class SqliteTranscripts {
  readonly #database: Database.Database;

  constructor(database: Database.Database) {
    this.#database = database;
  }

  append(chunk: NewTranscriptChunk): boolean {
    const result = this.#database
      .prepare(
        `INSERT INTO transcript_chunks
           (session_id, file, start_offset, end_offset, channel_id, bytes, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(
        chunk.sessionId,
        chunk.file ?? SESSION_FILE,
        chunk.offset,
        chunk.offset + chunk.bytes.length,
        chunk.channelId,
        chunk.bytes,
        new Date().toISOString(),
      );
    return result.changes > 0;
  }

  replace(sessionId: string, channelId: string, bytes: Buffer, file: string): boolean {
    return this.#database.transaction(() => {
      this.#database
        .prepare("DELETE FROM transcript_chunks WHERE session_id = ? AND file = ?")
        .run(sessionId, file);
      return this.append({ sessionId, channelId, offset: 0, bytes, file });
    })();
  }

  chunks(sessionId: string, after: number, file: string): TranscriptChunk[] {
    const rows = this.#database
      .prepare(
        `SELECT start_offset, bytes FROM transcript_chunks
         WHERE session_id = ? AND file = ? AND end_offset > ? ORDER BY start_offset`,
      )
      .all(sessionId, file, after) as Array<{ start_offset: number; bytes: Buffer }>;
    return rows.map((row) => ({ offset: row.start_offset, bytes: row.bytes }));
  }

  length(sessionId: string, file: string): number {
    const row = this.#database
      .prepare(
        `SELECT end_offset FROM transcript_chunks WHERE session_id = ? AND file = ?
         ORDER BY start_offset DESC LIMIT 1`,
      )
      .get(sessionId, file) as { end_offset: number } | undefined;
    return row?.end_offset ?? 0;
  }

  files(sessionId: string): StoredTranscriptFile[] {
    return this.#database
      .prepare(
        `SELECT file, max(end_offset) AS length, count(*) AS chunks FROM transcript_chunks
         WHERE session_id = ? GROUP BY file ORDER BY file`,
      )
      .all(sessionId) as StoredTranscriptFile[];
  }

  compact(sessionId: string, _channelId: string, file: string): TranscriptMerge | undefined {
    return this.#database.transaction(() => {
      const parts = this.#database
        .prepare(
          `SELECT start_offset AS start, end_offset AS end FROM transcript_chunks
           WHERE session_id = ? AND file = ? ORDER BY start_offset`,
        )
        .all(sessionId, file) as Array<{ start: number; end: number }>;
      const run = mergeRun(parts);
      if (run === undefined) return undefined;
      const rows = this.#database
        .prepare(
          `SELECT bytes FROM transcript_chunks
           WHERE session_id = ? AND file = ? AND start_offset >= ? ORDER BY start_offset`,
        )
        .all(sessionId, file, run.from) as Array<{ bytes: Buffer }>;
      const bytes = Buffer.concat(rows.map((row) => row.bytes));
      this.#database
        .prepare(
          `UPDATE transcript_chunks SET end_offset = ?, bytes = ?, created_at = ?
           WHERE session_id = ? AND file = ? AND start_offset = ?`,
        )
        .run(run.end, bytes, new Date().toISOString(), sessionId, file, run.from);
      this.#database
        .prepare(
          `DELETE FROM transcript_chunks
           WHERE session_id = ? AND file = ? AND start_offset > ? AND start_offset < ?`,
        )
        .run(sessionId, file, run.from, run.end);
      return { chunks: parts.length - run.merged + 1, bytes: bytes.length };
    })();
  }

  forget(sessionId: string): number {
    return this.#database
      .prepare(
        `DELETE FROM transcript_chunks WHERE session_id = ?
           AND NOT EXISTS (SELECT 1 FROM channels WHERE session_id = ?)`,
      )
      .run(sessionId, sessionId).changes;
  }

  prune(storedBefore: Date): number {
    const before = storedBefore.toISOString();
    return this.#database
      .prepare(
        `WITH sessions AS (
           SELECT session_id, max(channel_id) AS channel_id, max(created_at) AS newest
           FROM transcript_chunks GROUP BY session_id)
         DELETE FROM transcript_chunks WHERE session_id IN (
           SELECT s.session_id FROM sessions s
           WHERE s.newest < ?
             AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.session_id = s.session_id)
             AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.id = s.channel_id
                               AND c.session_id IS NULL AND c.last_activity_at >= ?))`,
      )
      .run(before, before).changes;
  }
}
