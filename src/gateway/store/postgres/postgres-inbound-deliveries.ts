/**
 * The `inbound_deliveries` table in the database every worker shares: which platform messages
 * a chat source took, by the platform's own id of each (one statement decides between
 * workers), and which of the source's channels have history.
 */
import type pg from "pg";
import {
  DELIVERY_KEY_DAYS,
  type InboundDeliveries,
  type KnownChannel,
  UNFINISHED_CLAIM_MS,
} from "../source-store.js";

/** Old claims are deleted at most this often by one worker. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * A claim left unfinished longer than `UNFINISHED_CLAIM_MS` is taken again (its worker died
 * before storing the message), by the database's clock.
 */
export function postgresInboundDeliveries(pool: pg.Pool): InboundDeliveries {
  let prunedAt = 0;
  return {
    claim: async (source, key) => {
      if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
        prunedAt = Date.now();
        await pool.query(
          "DELETE FROM inbound_deliveries WHERE created_at < now() - make_interval(days => $1)",
          [DELIVERY_KEY_DAYS],
        );
      }
      const result = await pool.query(
        `INSERT INTO inbound_deliveries (source, delivery_key, created_at) VALUES ($1, $2, now())
         ON CONFLICT (source, delivery_key) DO UPDATE SET created_at = excluded.created_at
           WHERE inbound_deliveries.finished_at IS NULL
             AND inbound_deliveries.created_at < now() - $3 * interval '1 millisecond'`,
        [source, key, UNFINISHED_CLAIM_MS],
      );
      return (result.rowCount ?? 0) > 0;
    },
    finish: async (source, key) => {
      await pool.query(
        `UPDATE inbound_deliveries SET finished_at = now()
         WHERE source = $1 AND delivery_key = $2 AND finished_at IS NULL`,
        [source, key],
      );
    },
    release: async (source, key) => {
      await pool.query(
        `DELETE FROM inbound_deliveries
         WHERE source = $1 AND delivery_key = $2 AND finished_at IS NULL`,
        [source, key],
      );
    },
    channels: async (source) => {
      const prefix = `${source}:`;
      const { rows } = await pool.query<{ id: string; last: Date | null }>(
        `SELECT c.id, (SELECT m.created_at FROM messages m
           WHERE m.channel_id = c.id AND m.kind = 'user' ORDER BY m.seq DESC LIMIT 1) AS last
         FROM channels c WHERE left(c.id, $1) = $2 ORDER BY c.id`,
        [prefix.length, prefix],
      );
      return rows.map(
        (row): KnownChannel => ({
          channelId: row.id,
          lastMessageAt: row.last === null ? undefined : new Date(row.last).toISOString(),
        }),
      );
    },
  };
}
