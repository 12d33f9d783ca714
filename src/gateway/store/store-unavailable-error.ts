/**
 * The database cannot be reached. At start (it could not be reached or migrated), the message
 * names it with the password hidden and `rudder serve` prints it as its one line and exits 1.
 * While running (see `StoreHealth`), the message is the one line an API client gets with its
 * 503, e.g. `store unavailable: connection refused to postgres://rudder:***@db:5432/rudder;
 * retrying`, and `retryAfterSeconds` its `Retry-After`.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
  readonly retryAfterSeconds: number;

  constructor(message: string, options: ErrorOptions & { retryAfterSeconds?: number } = {}) {
    super(message, options);
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }
}

/** Whether `error` says the store is out of reach (rather than a bug or a refused statement). */
export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return error instanceof StoreUnavailableError;
}
