/**
 * The PostgreSQL store's `spend_entries` table: what turns, wake-ups and compactions spent, per
 * channel and binding, which budgets add up.
 */
import type pg from "pg";
import {
  putSpendStatement,
  putSpendValues,
  type SpendRow,
  spendQuery,
  toSpendTotal,
} from "../spend-rows.js";
import type { SpendEntry, SpendTotal } from "../store.js";
import { preparedQuery } from "./prepared-query.js";

export class PostgresSpend {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async #rows<Row extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<Row[]> {
    return (await this.#pool.query<Row>(preparedQuery(text, values))).rows;
  }

  async since(since: string): Promise<SpendTotal[]> {
    return (await this.#rows<SpendRow>(spendQuery("$1::timestamptz"), [since])).map(toSpendTotal);
  }

  async put(entry: SpendEntry): Promise<void> {
    await this.#rows(
      putSpendStatement((position) => `$${position}`),
      putSpendValues(entry),
    );
  }

  async delete(entryId: string): Promise<void> {
    await this.#rows("DELETE FROM spend_entries WHERE id = $1", [entryId]);
  }
}
