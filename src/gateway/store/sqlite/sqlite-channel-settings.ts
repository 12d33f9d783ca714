import type Database from "better-sqlite3";
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
  };
}
