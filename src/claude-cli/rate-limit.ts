import { RateLimitError } from "./errors.js";

const RATE_LIMIT_TEXT = [
  /(?:\(|status:?\s*|code:?\s*|error:?\s*)429\b/i,
  /rate[\s_-]?limit/i,
  /usage limit/i,
  /too many requests/i,
  /limit reached/i,
  /quota exceeded/i,
];

/**
 * The text backstop: true when an error (or its message) reads like a rate or usage limit.
 * Structured fields are checked first where they exist (`rateLimitFromResult`).
 */
export function isRateLimitError(errorOrMessage: unknown): boolean {
  if (errorOrMessage instanceof RateLimitError) return true;
  const text =
    errorOrMessage instanceof Error
      ? `${errorOrMessage.name}: ${errorOrMessage.message}`
      : String(errorOrMessage ?? "");
  return RATE_LIMIT_TEXT.some((pattern) => pattern.test(text));
}

/**
 * Whether a stream-json `result` (or an `assistant` API-error line) reports a rate limit:
 * `api_error_status` 429 or `api_error_type`/`error` naming a rate limit first, then the
 * text of an error result.
 */
export function isRateLimitLine(line: Record<string, unknown>): boolean {
  if (line.api_error_status === 429) return true;
  if (line.api_error_type === "rate_limit_error" || line.error === "rate_limit") return true;
  if (line.is_error === true && typeof line.result === "string") {
    return isRateLimitError(line.result);
  }
  return false;
}

/**
 * The reset time a limit message names, when it does: Claude's `...limit reached|<epoch
 * seconds>` form, or an ISO timestamp after "reset".
 */
export function parseResetTime(text: string): Date | undefined {
  const epoch = /limit reached\|(\d{9,11})\b/i.exec(text);
  if (epoch?.[1]) return new Date(Number(epoch[1]) * 1000);
  const iso = /resets?\s+(?:at\s+)?(\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)/i.exec(text);
  if (iso?.[1]) {
    const date = new Date(iso[1]);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return undefined;
}
