import type pg from "pg";
import type { TurnDisplays } from "../turn-displays.js";

/**
 * The `turn_displays` table (see `TurnDisplays`), shared by the workers: the worker that ran
 * the turn writes it (with the reply, in `settleStatement`), any worker reads it.
 */
export function postgresTurnDisplays(pool: pg.Pool): TurnDisplays {
  return {
    list: async (messageIds) => {
      if (messageIds.length === 0) return new Map();
      const { rows } = await pool.query<{ message_id: string; display: string }>(
        "SELECT message_id, display FROM turn_displays WHERE message_id = ANY($1)",
        [messageIds],
      );
      return new Map(rows.map((row) => [row.message_id, row.display]));
    },
  };
}
