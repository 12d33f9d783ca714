import type Database from "better-sqlite3";
import {
  CHANNEL_MESSAGES_REMOVAL_SQL,
  CHANNEL_REMOVAL_SQL,
  CHANNEL_ROW_REMOVAL_SQL,
} from "../channel-removal-sql.js";
import type { ChannelSettings } from "../channel-settings.js";
import type { GroupCommit } from "./group-commit.js";

/** `ChannelSettings` on one gateway's SQLite `channels` table. */
export function sqliteChannelSettings(
  database: Database.Database,
  commits: GroupCommit,
): ChannelSettings {
  const changed = (sql: string, ...values: unknown[]) =>
    commits.write(() => database.prepare(sql).run(...values).changes > 0);
  return {
    rename: (channelId, title) =>
      changed("UPDATE channels SET title = ? WHERE id = ?", title || null, channelId),
    archive: (channelId, archived) =>
      changed(
        "UPDATE channels SET archived_at = ? WHERE id = ?",
        archived ? new Date().toISOString() : null,
        channelId,
      ),
    noteChatTitle: async (channelId, chatTitle) => {
      await changed("UPDATE channels SET chat_title = ? WHERE id = ?", chatTitle, channelId);
    },
    remove: (channelId) =>
      commits.write(
        database.transaction(() => {
          const id = { 1: channelId };
          for (const sql of CHANNEL_REMOVAL_SQL) database.prepare(sql).run(id);
          const messages = database.prepare(CHANNEL_MESSAGES_REMOVAL_SQL).run(id).changes;
          const found = database.prepare(CHANNEL_ROW_REMOVAL_SQL).run(id).changes > 0;
          return found ? { messages } : null;
        }),
      ),
  };
}
