import type Database from "better-sqlite3";
import type { TurnDisplays } from "../turn-displays.js";

/** Each database's statement, prepared once: the page and API clients read messages often. */
const selects = new WeakMap<Database.Database, Database.Statement>();

/** The `turn_displays` table of one gateway's SQLite store (see `TurnDisplays`). */
export function sqliteTurnDisplays(database: Database.Database): TurnDisplays {
  return {
    list: async (messageIds) => {
      if (messageIds.length === 0) return new Map();
      let select = selects.get(database);
      if (select === undefined) {
        select = database.prepare(
          `SELECT message_id, display FROM turn_displays
           WHERE message_id IN (SELECT value FROM json_each(?))`,
        );
        selects.set(database, select);
      }
      const rows = select.all(JSON.stringify(messageIds)) as Array<{
        message_id: string;
        display: string;
      }>;
      return new Map(rows.map((row) => [row.message_id, row.display]));
    },
  };
}
