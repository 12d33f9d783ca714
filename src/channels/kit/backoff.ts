/** Capped exponential backoff, shared by a platform's receiving loop and the reply ledger. */

/** `initialMs` doubled per failure in a row, at most `maxMs`. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 1000, maxMs: 60_000 };

/** How long to wait after the `failures`-th failure in a row; the platform's word wins. */
export function backoffDelayMs(
  failures: number,
  backoff: Backoff,
  retryAfterMs?: number | undefined,
): number {
  if (retryAfterMs !== undefined) return Math.max(0, retryAfterMs);
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** exponent);
}
