/**
 * The `inbound_deliveries` table in a gateway's SQLite file: which platform messages a chat
 * source took, by the platform's own id of each, and which of the source's channels have history.
 */
import type Database from "better-sqlite3";
import { DELIVERY_KEY_DAYS, type InboundDeliveries, type KnownChannel } from "../source-store.js";
import type { GroupCommit } from "./group-commit.js";

/** Old claims are deleted at most this often (a claim's write carries the delete). */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Marks a claim taken for good (the message stored), inside the caller's write. */
export function finishDeliveryClaim(
  database: Database.Database,
  source: string,
  key: string,
  at: string,
): void {
  database
    .prepare(
      `UPDATE inbound_deliveries SET finished_at = ?
       WHERE source = ? AND delivery_key = ? AND finished_at IS NULL`,
    )
    .run(at, source, key);
}

/**
 * One gateway uses the file, so at open every claim not finished is let go: the gateway that
 * held it was killed before the message was stored, and the platform's redelivery is taken.
 */
export function sqliteInboundDeliveries(
  database: Database.Database,
  commits: GroupCommit,
): InboundDeliveries {
  try {
    database.prepare("DELETE FROM inbound_deliveries WHERE finished_at IS NULL").run();
  } catch {
    // A file that cannot be written now is the store's health to report.
  }
  let prunedAt = 0;
  return {
    claim: (source, key) =>
      commits.write(() => {
        const now = Date.now();
        if (now - prunedAt > PRUNE_EVERY_MS) {
          prunedAt = now;
          const cutoff = new Date(now - DELIVERY_KEY_DAYS * 24 * 60 * 60 * 1000).toISOString();
          database.prepare("DELETE FROM inbound_deliveries WHERE created_at < ?").run(cutoff);
        }
        const { changes } = database
          .prepare(
            `INSERT OR IGNORE INTO inbound_deliveries (source, delivery_key, created_at)
             VALUES (?, ?, ?)`,
          )
          .run(source, key, new Date(now).toISOString());
        return changes > 0;
      }),
    finish: (source, key) =>
      commits.write(() => finishDeliveryClaim(database, source, key, new Date().toISOString())),
    release: (source, key) =>
      commits.write(() => {
        database
          .prepare(
            `DELETE FROM inbound_deliveries
             WHERE source = ? AND delivery_key = ? AND finished_at IS NULL`,
          )
          .run(source, key);
      }),
    channels: async (source) => {
      const prefix = `${source}:`;
      const rows = database
        .prepare(
          `SELECT c.id AS channelId, (SELECT m.created_at FROM messages m
             WHERE m.channel_id = c.id AND m.kind = 'user' ORDER BY m.seq DESC LIMIT 1)
             AS lastMessageAt
           FROM channels c WHERE substr(c.id, 1, ?) = ? ORDER BY c.id`,
        )
        .all(prefix.length, prefix) as Array<{ channelId: string; lastMessageAt: string | null }>;
      return rows.map(
        (row): KnownChannel => ({
          channelId: row.channelId,
          lastMessageAt: row.lastMessageAt ?? undefined,
        }),
      );
    },
  };
}
