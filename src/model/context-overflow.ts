import type { ModelError } from "./types.js";

/**
 * The Messages API's refusals of a request too big for the window, as they read after
 * `classifyFailure`: `prompt is too long: 215000 tokens > 200000 maximum`, `input length and
 * max_tokens exceed context limit`, a 413 `request_too_large`, and the wordings of compatible
 * servers (`context length`, `context window`, `maximum context`).
 */
const OVERFLOW_PATTERNS = [
  /prompt is too long/i,
  /exceed(?:s|ed)? (?:the )?context (?:limit|window)/i,
  /context[ _-]length/i,
  /maximum context/i,
  /too many (?:input )?tokens/i,
  /request_too_large/i,
];

export interface ContextOverflow {
  /** The request's size and the maximum, when the API said them. */
  tokens?: number;
  maximum?: number;
}

/** The overflow a failed call reports, or undefined for any other failure. */
export function contextOverflowOf(error: ModelError): ContextOverflow | undefined {
  if (error.status !== undefined && error.status !== 400 && error.status !== 413) return undefined;
  if (!OVERFLOW_PATTERNS.some((pattern) => pattern.test(error.message))) return undefined;
  const sizes = /(\d+) tokens > (\d+)(?: maximum)?/.exec(error.message);
  if (sizes === null) return {};
  return { tokens: Number(sizes[1]), maximum: Number(sizes[2]) };
}
