/**
 * The database could not be reached or migrated at start. The message names it with the
 * password hidden; `rudder serve` prints it as its one line and exits 1.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}
