import type pg from "pg";
import {
  CHANNEL_MESSAGES_REMOVAL_SQL,
  CHANNEL_REMOVAL_SQL,
  CHANNEL_ROW_REMOVAL_SQL,
  SHARED_CHANNEL_REMOVAL_SQL,
} from "../channel-removal-sql.js";
import type { ChannelSettings } from "../channel-settings.js";

/** `ChannelSettings` on the shared `channels` table: any worker sets, every worker reads. */
export function postgresChannelSettings(pool: pg.Pool): ChannelSettings {
  const changed = async (sql: string, values: unknown[]) =>
    ((await pool.query(sql, values)).rowCount ?? 0) > 0;
  return {
    rename: (channelId, title) =>
      changed("UPDATE channels SET title = $1 WHERE id = $2", [title || null, channelId]),
    archive: (channelId, archived) =>
      changed("UPDATE channels SET archived_at = $1 WHERE id = $2", [
        archived ? new Date() : null,
        channelId,
      ]),
    noteChatTitle: async (channelId, chatTitle) => {
      await changed("UPDATE channels SET chat_title = $1 WHERE id = $2", [chatTitle, channelId]);
    },
    remove: async (channelId) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        // A message stored meanwhile by another worker waits, then makes the channel anew.
        await client.query("SELECT 1 FROM channels WHERE id = $1 FOR UPDATE", [channelId]);
        for (const sql of [...CHANNEL_REMOVAL_SQL, ...SHARED_CHANNEL_REMOVAL_SQL]) {
          await client.query(sql, [channelId]);
        }
        const messages = (await client.query(CHANNEL_MESSAGES_REMOVAL_SQL, [channelId])).rowCount;
        const found =
          ((await client.query(CHANNEL_ROW_REMOVAL_SQL, [channelId])).rowCount ?? 0) > 0;
        await client.query("COMMIT");
        return found ? { messages: messages ?? 0 } : null;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
  };
}
