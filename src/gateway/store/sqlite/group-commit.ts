import type Database from "better-sqlite3";

/** What a failed or refused write becomes, and who hears of a commit (see `healthGuard`). */
export interface CommitGuard {
  /** The error to refuse a write with now, without trying it; undefined to try it. */
  refuse(): Error | undefined;
  /**
   * What a write's or a commit's failure is thrown as; `undone`: the failure ended the
   * transaction (SQLite undoes all of it for a full disk or an I/O error, and what better-sqlite3
   * then throws may be its own failure to undo a savepoint that is gone).
   */
  translate(error: unknown, undone: boolean): unknown;
  /** A commit went through. */
  committed(): void;
}

const OPEN: CommitGuard = {
  refuse: () => undefined,
  translate: (error) => error,
  committed: () => {},
};

/**
 * Writes a transaction takes at most before it is committed, even within one turn of the loop:
 * a burst of POSTs read in one turn (400 at once) was answered all together at the turn's end,
 * after the slowest; committed every 16 writes, the first are answered while the rest are read.
 * 400 inserts took as long in 25 commits as in one (WAL, no sync at commit).
 */
const MAX_WRITES = 16;

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
 * an agent, which may act on a count it was not told of). A transaction with `MAX_WRITES`
 * writes is committed as the next write comes. If the commit fails, or a write's failure ends
 * the transaction, every write of the transaction fails with that error.
 */
export class GroupCommit {
  readonly #database: Database.Database;
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  readonly #guard: CommitGuard;
  #waiting: Waiting[] | undefined;

  constructor(database: Database.Database, guard: CommitGuard = OPEN) {
    this.#database = database;
    this.#guard = guard;
    this.#begin = database.prepare("BEGIN");
    this.#commit = database.prepare("COMMIT");
  }

  /** Runs `work` in the open transaction; refused at once while the guard says so. */
  write<T>(work: () => T): Promise<T> {
    const refused = this.#guard.refuse();
    if (refused !== undefined) return Promise.reject(refused);
    return this.probe(work);
  }

  /** Like `write`, never refused: how the store's health finds out whether it can write again. */
  probe<T>(work: () => T): Promise<T> {
    if (this.#waiting !== undefined && this.#waiting.length >= MAX_WRITES) this.flush();
    if (this.#waiting === undefined) {
      try {
        this.#begin.run();
      } catch (error) {
        return Promise.reject(this.#guard.translate(error, false));
      }
      this.#waiting = [];
      setImmediate(() => this.flush());
    }
    const waiting = this.#waiting;
    let result: T;
    try {
      result = work();
    } catch (error) {
      // Some failures (a full disk, an I/O error) end the transaction with everything in it.
      const undone = !this.#database.inTransaction;
      const failure = this.#guard.translate(error, undone);
      if (undone) this.#fail(waiting, failure);
      return Promise.reject(failure);
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
      try {
        if (this.#database.inTransaction) this.#database.exec("ROLLBACK");
      } catch {
        // SQLite undid what it could; the transaction is over either way.
      }
      const failure = this.#guard.translate(error, true);
      for (const write of waiting) write.reject(failure);
      return;
    }
    // Writes that failed are not waiting: a commit with none of them wrote nothing.
    if (waiting.length > 0) this.#guard.committed();
    for (const write of waiting) write.resolve();
  }

  #fail(waiting: Waiting[], error: unknown): void {
    if (this.#waiting === waiting) this.#waiting = undefined;
    for (const write of waiting) write.reject(error);
  }
}
