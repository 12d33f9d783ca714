import type Database from "better-sqlite3";
import type { NewTranscriptChunk, TranscriptChunk } from "../transcript-chunks.js";

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
           (session_id, start_offset, end_offset, channel_id, bytes, created_at)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(
        chunk.sessionId,
        chunk.offset,
        chunk.offset + chunk.bytes.length,
        chunk.channelId,
        chunk.bytes,
        new Date().toISOString(),
      );
    return result.changes > 0;
  }

  replace(sessionId: string, channelId: string, bytes: Buffer): boolean {
    return this.#database.transaction(() => {
      this.#database.prepare("DELETE FROM transcript_chunks WHERE session_id = ?").run(sessionId);
      return this.append({ sessionId, channelId, offset: 0, bytes });
    })();
  }

  chunks(sessionId: string, after: number): TranscriptChunk[] {
    const rows = this.#database
      .prepare(
        `SELECT start_offset, bytes FROM transcript_chunks WHERE session_id = ? AND end_offset > ?
         ORDER BY start_offset`,
      )
      .all(sessionId, after) as Array<{ start_offset: number; bytes: Buffer }>;
    return rows.map((row) => ({ offset: row.start_offset, bytes: row.bytes }));
  }

  length(sessionId: string): number {
    const row = this.#database
      .prepare(
        `SELECT end_offset FROM transcript_chunks WHERE session_id = ?
         ORDER BY start_offset DESC LIMIT 1`,
      )
      .get(sessionId) as { end_offset: number } | undefined;
    return row?.end_offset ?? 0;
  }
}
