/**
 * When to retry a failed model request and how long to wait first.
 */

export const DEFAULT_MAX_RETRIES = 4;
/** The longest single wait; a server asking for more is not waited for. */
export const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;
const BASE_DELAY_MS = 500;
const MAX_BACKOFF_MS = 16_000;

export interface RetryTiming {
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/** Header lookup that works for fetch `Headers` and plain records alike. */
export type HeaderReader = (name: string) => string | null | undefined;

/** Statuses worth another try: timeouts, conflicts, rate limits, server errors, overload. */
export function isRetryableStatus(status: number | undefined): boolean {
  if (status === undefined) return true;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Milliseconds the server asked us to wait, from `retry-after-ms`, or `retry-after`
 * as seconds or an HTTP date; undefined when it did not say.
 */
export function serverRetryDelayMs(header: HeaderReader, now = Date.now()): number | undefined {
  const milliseconds = Number.parseFloat(header("retry-after-ms") ?? "");
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const value = header("retry-after")?.trim();
  if (value === undefined || value === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  if (Number.isFinite(date)) return Math.max(0, date - now);
  return undefined;
}

/**
 * Exponential backoff with jitter for retry number `attempt` (1-based): the base
 * doubles each time up to 16 s, and a random quarter is taken off so that clients
 * failing together do not come back together.
 */
export function backoffDelayMs(attempt: number, timing: RetryTiming = {}): number {
  const base = timing.baseDelayMs ?? BASE_DELAY_MS;
  const ceiling = Math.min(timing.maxDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS, MAX_BACKOFF_MS);
  const exponential = Math.min(base * 2 ** Math.max(0, attempt - 1), ceiling);
  return Math.round(exponential * (1 - Math.random() * 0.25));
}

/**
 * The wait before retry number `attempt`: the server's word when it gave one,
 * else backoff. Undefined when the server asks for longer than `maxDelayMs`,
 * which means: give up now and report when the limit resets.
 */
export function retryDelayMs(
  attempt: number,
  header: HeaderReader | undefined,
  timing: RetryTiming = {},
): number | undefined {
  const requested = header === undefined ? undefined : serverRetryDelayMs(header);
  if (requested === undefined) return backoffDelayMs(attempt, timing);
  if (requested > (timing.maxDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS)) return undefined;
  return requested;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export function waitUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Parses a retry count such as `RUDDER_MAX_RETRIES`; undefined when not a whole number >= 0. */
export function parseMaxRetries(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number.parseInt(value, 10);
}
