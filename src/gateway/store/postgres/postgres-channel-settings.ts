import type pg from "pg";
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
  };
}
