import type Database from "better-sqlite3";

interface Waiting {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The writes of one turn of the event loop share one SQLite transaction, committed before the
 * loop goes on to its next turn (`setImmediate`). A commit costs far more than the rows it
 * writes (every page a commit touches is appended to the log again: one message's insert
 * writes a page of the table and of each of its indexes), and at a thousand messages a second
 * the writes of several messages land in the same turn, touching the same pages.
 *
 * Each write runs at once, inside the open transaction (a failing one undoes only itself:
 * better-sqlite3 runs a nested `transaction()` as a savepoint, SQLite a failing statement as
 * itself), and its promise settles only once the transaction is committed: so whoever awaits
 * a write may count on it as before. Commits keep the order of the writes, so a write awaited
 * also vouches for every write issued before it. `flush` commits at once what is open, for
 * writes whose callers act on them without waiting (the gateway calls it before it writes to
 * an agent, which may act on a count it was not told of). If the commit fails, or a write's failure ends the transaction, every write of
 * the transaction fails with that error.
 */
export class GroupCommit {
  readonly #database: Database.Database;
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  #waiting: Waiting[] | undefined;

  constructor(database: Database.Database) {
    this.#database = database;
    this.#begin = database.prepare("BEGIN");
    this.#commit = database.prepare("COMMIT");
  }

  write<T>(work: () => T): Promise<T> {
    if (this.#waiting === undefined) {
      this.#begin.run();
      this.#waiting = [];
      setImmediate(() => this.flush());
    }
    const waiting = this.#waiting;
    let result: T;
    try {
      result = work();
    } catch (error) {
      // Some failures (a full disk, an I/O error) end the transaction with everything in it.
      if (!this.#database.inTransaction) this.#fail(waiting, error);
      return Promise.reject(error);
    }
    const done = new Promise<T>((resolve, reject) => {
      waiting.push({ resolve: () => resolve(result), reject });
    });
    return done;
  }

  /** Commits the open transaction, if any; its writes' promises settle. */
  flush(): void {
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    this.#waiting = undefined;
    if (!this.#database.open) {
      for (const write of waiting) write.reject(new Error("the store was closed"));
      return;
    }
    try {
      this.#commit.run();
    } catch (error) {
      if (this.#database.inTransaction) this.#database.exec("ROLLBACK");
      for (const write of waiting) write.reject(error);
      return;
    }
    for (const write of waiting) write.resolve();
  }

  #fail(waiting: Waiting[], error: unknown): void {
    if (this.#waiting === waiting) this.#waiting = undefined;
    for (const write of waiting) write.reject(error);
  }
}
