import { createHash } from "node:crypto";
import type pg from "pg";

const names = new Map<string, string>();

/**
 * A query as a named prepared statement, its name taken from its text: each connection parses
 * and plans it once, then only binds and runs it (the statements of the per-message path are
 * run thousands of times; planning a settle's statement costs more than running it).
 */
export function preparedQuery(text: string, values: unknown[]): pg.QueryConfig {
  let name = names.get(text);
  if (name === undefined) {
    name = `rudder_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    names.set(text, name);
  }
  return { name, text, values };
}
