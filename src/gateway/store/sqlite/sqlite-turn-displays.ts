import type Database from "better-sqlite3";
import type { TurnDisplays } from "../turn-displays.js";

/** The `turn_displays` table of one gateway's SQLite store (see `TurnDisplays`). */
export function sqliteTurnDisplays(database: Database.Database): TurnDisplays {
  return {
    list: async (messageIds) => {
      if (messageIds.length === 0) return new Map();
      const rows = database
        .prepare(
          `SELECT message_id, display FROM turn_displays
           WHERE message_id IN (SELECT value FROM json_each(?))`,
        )
        .all(JSON.stringify(messageIds)) as Array<{ message_id: string; display: string }>;
      return new Map(rows.map((row) => [row.message_id, row.display]));
    },
  };
}
