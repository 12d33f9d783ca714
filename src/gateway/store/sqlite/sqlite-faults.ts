import type { StoreHealth } from "../store-health.js";
import type { CommitGuard } from "./group-commit.js";

/**
 * The SQLite result codes of a store that cannot be written for now, by their primary code
 * (`SQLITE_IOERR_WRITE` is an `SQLITE_IOERR`): a full disk, a lock another process holds, an
 * I/O error, a file that became read-only or went away. Anything else is a bug or a refused
 * statement, and stays what it is.
 */
const FAULTS: Record<string, string> = {
  SQLITE_FULL: "the disk is full",
  SQLITE_BUSY: "the database is locked by another process",
  SQLITE_LOCKED: "the database is locked",
  SQLITE_IOERR: "an I/O error",
  SQLITE_READONLY: "the database is read-only",
  SQLITE_CANTOPEN: "the database file cannot be opened",
  SQLITE_NOMEM: "out of memory",
  SQLITE_PROTOCOL: "a locking protocol error",
};

/** Why `error` keeps the store from being written for now ("the disk is full (SQLITE_FULL)"). */
export function faultReason(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return undefined;
  const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
  const what = FAULTS[primary];
  return what === undefined ? undefined : `${what} (${code})`;
}

/**
 * How the SQLite store's writes meet its health: a write that fails for a fault marks the store
 * down (`StoreHealth.unavailable`, logged once) and rejects with the `StoreUnavailableError`
 * the API answers 503 to; while it is down, writes are refused at once (no busy wait on a lock
 * held elsewhere), held writes wait (see `patientWrites`), and only the health's probe, with
 * backoff, tries the file again; a write that commits marks it up.
 */
export function healthGuard(health: StoreHealth): CommitGuard {
  return {
    refuse: () => (health.up ? undefined : health.refusal()),
    translate: (error, undone) => {
      const reason =
        faultReason(error) ??
        (undone ? `the database undid a write (${describe(error)})` : undefined);
      return reason === undefined ? error : health.unavailable(`${reason} writing`, error);
    },
    committed: () => health.reachable(),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
