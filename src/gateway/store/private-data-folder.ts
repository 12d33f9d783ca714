import { chmodSync, closeSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** The files of the data folder only its owner may read: the token and the SQLite database. */
const PRIVATE_FILES = ["token", "gateway.db", "gateway.db-wal", "gateway.db-shm"];

/** Sets `path` to `mode` when others may read or write it; says so in `log`. Silent if absent. */
function narrow(path: string, mode: number, what: string, log: (line: string) => void): void {
  let current: number;
  try {
    current = statSync(path).mode & 0o777;
  } catch {
    return;
  }
  if ((current & 0o077) === 0) return;
  chmodSync(path, mode);
  log(
    `rudder: ${what} ${path} was open to other users (mode ${current.toString(8)}); it is now ${mode.toString(8)}`,
  );
}

/**
 * Makes the gateway's data folder private before anything is opened in it: the folder 0700,
 * made so if new; the token and the database 0600, an empty database made so if there is none
 * yet (SQLite then gives its journal files the same mode). Existing ones a gateway before this
 * left readable to other users (every channel's conversation, the token) are narrowed, with a
 * line in `log` for each.
 */
export function makeDataFolderPrivate(dataDir: string, log: (line: string) => void): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  narrow(dataDir, 0o700, "the data folder", log);
  for (const name of PRIVATE_FILES) narrow(join(dataDir, name), 0o600, "the file", log);
}

/**
 * Creates the database file empty and 0600 (its folder 0700) unless it exists, so SQLite never
 * makes it 0644.
 */
export function createPrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, "a", 0o600));
}
