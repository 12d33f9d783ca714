import type pg from "pg";
import { preparedQuery } from "./prepared-query.js";

/**
 * The API token every worker on this database accepts: the stored one, or `candidate` stored
 * now when there is none yet (the first worker's).
 */
export async function sharedToken(pool: pg.Pool, candidate: string): Promise<string> {
  await pool.query(
    preparedQuery(
      "INSERT INTO settings (name, value) VALUES ('api_token', $1) ON CONFLICT (name) DO NOTHING",
      [candidate],
    ),
  );
  // A statement of its own: its snapshot sees a token another worker committed meanwhile.
  const { rows } = await pool.query<{ value: string }>(
    preparedQuery("SELECT value FROM settings WHERE name = 'api_token'", []),
  );
  const [row] = rows;
  if (row === undefined) throw new Error("the stored API token vanished");
  return row.value;
}
