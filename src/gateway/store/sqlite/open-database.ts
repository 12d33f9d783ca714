import type Database from "better-sqlite3";
import { createPrivateFile } from "../private-data-folder.js";
import { StoreUnavailableError } from "../store-unavailable-error.js";
import { openMigrated } from "./migrations.js";

/**
 * How long one statement waits for a lock another process holds, at most. better-sqlite3 is
 * synchronous, so this wait blocks the whole gateway: it is kept short, and a write that finds
 * the lock still held marks the store down and is retried with backoff (see `healthGuard`).
 */
export const BUSY_TIMEOUT_MS = 100;

/** The one row the store writes to learn that it can write (see `writeProbe`). */
export const PROBE_SQL = "INSERT OR REPLACE INTO store_probe (id, at) VALUES (1, ?)";

/**
 * Opens (creating it 0600 if need be) the SQLite database at `path` in WAL mode, migrated, and proves
 * that it can be written by writing one row. A database that cannot be (a read-only file or
 * folder, a full disk, a lock held past the wait) is a `StoreUnavailableError` whose message is
 * the one line `rudder serve` refuses to start with.
 */
export function openDatabase(path: string): Database.Database {
  let database: Database.Database | undefined;
  try {
    if (path !== ":memory:") createPrivateFile(path);
    // Opened with a long wait for a lock: at start, a moment's lock is no reason to refuse.
    database = openMigrated(path);
    database.prepare(PROBE_SQL).run(new Date().toISOString());
    database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    return database;
  } catch (error) {
    database?.close();
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown }).code;
    throw new StoreUnavailableError(
      `cannot write the store ${path}: ${message}${typeof code === "string" ? ` (${code})` : ""}`,
      { cause: error },
    );
  }
}
