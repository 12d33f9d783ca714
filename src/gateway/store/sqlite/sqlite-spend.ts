/**
 * The SQLite store's `spend_entries` table: what turns, wake-ups and compactions spent, per
 * channel and binding, which budgets add up. Writes go through the store's `GroupCommit`.
 */
import type Database from "better-sqlite3";
import {
  putSpendStatement,
  putSpendValues,
  type SpendRow,
  spendQuery,
  toSpendTotal,
} from "../spend-rows.js";
import type { SpendEntry, SpendTotal } from "../store.js";
import type { GroupCommit } from "./group-commit.js";

export class SqliteSpend {
  readonly #statement: (sql: string) => Database.Statement;
  readonly #commits: GroupCommit;

  /** `statement` is the store's cache of prepared statements. */
  constructor(statement: (sql: string) => Database.Statement, commits: GroupCommit) {
    this.#statement = statement;
    this.#commits = commits;
  }

  async since(since: string): Promise<SpendTotal[]> {
    const rows = this.#statement(spendQuery("?")).all(since, since) as SpendRow[];
    return rows.map(toSpendTotal);
  }

  put(entry: SpendEntry): Promise<void> {
    return this.#commits.write(() => {
      this.#statement(putSpendStatement(() => "?")).run(...putSpendValues(entry));
    });
  }

  delete(entryId: string): Promise<void> {
    return this.#commits.write(() => {
      this.#statement("DELETE FROM spend_entries WHERE id = ?").run(entryId);
    });
  }
}
