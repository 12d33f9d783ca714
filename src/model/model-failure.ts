import { ApiError } from "./api-error.js";
import { type HeaderReader, isRetryableStatus } from "./retry-policy.js";
import type { ModelError, ModelErrorSubtype } from "./types.js";

/** A failed attempt, classified: what to report and whether to try again. */
export interface ModelFailure {
  error: ModelError;
  retryable: boolean;
  /** Response headers, for `retry-after` and rate-limit resets. */
  header?: HeaderReader;
}

/** Status implied by an error that arrived inside a stream, which has none of its own. */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

export function subtypeForStatus(status: number | undefined): ModelErrorSubtype {
  if (status === undefined) return "network_error";
  if (status === 429) return "rate_limit";
  if (status === 529) return "overloaded";
  if (status === 401 || status === 403) return "authentication_failed";
  if (status === 400 || status === 404 || status === 413 || status === 422) {
    return "invalid_request";
  }
  return "api_error";
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The innermost cause's message (e.g. `connect ECONNREFUSED 127.0.0.1:9`), which says the most. */
function rootCause(error: unknown): string {
  let current = error;
  for (
    let depth = 0;
    depth < 5 && current instanceof Error && current.cause !== undefined;
    depth++
  ) {
    current = current.cause;
  }
  if (current instanceof AggregateError && current.errors.length > 0) current = current.errors[0];
  return current instanceof Error ? current.message : String(current);
}

/**
 * The epoch milliseconds at which a rate limit lifts: the latest reset among
 * the limits that are exhausted (`...-remaining: 0`), else `retry-after`, else
 * the earliest reset announced. Undefined when the response said nothing.
 */
export function rateLimitResetAt(header: HeaderReader, now = Date.now()): number | undefined {
  const unified = Number(header("anthropic-ratelimit-unified-reset") ?? Number.NaN);
  if (Number.isFinite(unified) && unified > 0) return unified * 1000;
  const exhausted: number[] = [];
  const announced: number[] = [];
  for (const limit of ["requests", "tokens", "input-tokens", "output-tokens"]) {
    const reset = Date.parse(header(`anthropic-ratelimit-${limit}-reset`) ?? "");
    if (!Number.isFinite(reset)) continue;
    announced.push(reset);
    if (header(`anthropic-ratelimit-${limit}-remaining`) === "0") exhausted.push(reset);
  }
  if (exhausted.length > 0) return Math.max(...exhausted);
  const seconds = Number(header("retry-after") ?? Number.NaN);
  if (Number.isFinite(seconds) && seconds >= 0) return now + seconds * 1000;
  if (announced.length > 0) return Math.min(...announced);
  return undefined;
}

/** Classifies an error thrown by the Messages client (or while reading its stream). */
export function classifyFailure(error: unknown, signal: AbortSignal): ModelFailure {
  if (signal.aborted) return abortedFailure();
  if (!(error instanceof ApiError) || (error.status === undefined && error.body === undefined)) {
    return {
      error: {
        subtype: "network_error",
        message: `API Error: Connection error (${oneLine(rootCause(error))})`,
      },
      retryable: true,
    };
  }
  const type = error.type;
  const status = error.status ?? (type === undefined ? undefined : STATUS_BY_TYPE[type]);
  const detail = error.apiMessage ?? error.message;
  const header = error.header;
  const subtype = subtypeForStatus(status);
  const prefix = status === undefined ? "API Error:" : `API Error: Request rejected (${status})`;
  const message = oneLine(`${prefix} ${type === undefined ? "" : `${type}: `}${detail}`);
  const modelError: ModelError = { subtype, message };
  if (status !== undefined) modelError.status = status;
  if (subtype === "rate_limit") {
    const resetAt = rateLimitResetAt(header);
    if (resetAt !== undefined) modelError.resetAt = resetAt;
  }
  const shouldRetry = header("x-should-retry");
  const retryable =
    shouldRetry === "true" ? true : shouldRetry === "false" ? false : isRetryableStatus(status);
  return { error: modelError, retryable, header };
}

export function abortedFailure(): ModelFailure {
  return { error: { subtype: "aborted", message: "Request aborted" }, retryable: false };
}
