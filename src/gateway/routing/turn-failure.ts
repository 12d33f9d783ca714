import { ClaudeTimeoutError, RateLimitError } from "../../claude-cli/errors.js";
import { isRateLimitError } from "../../claude-cli/rate-limit.js";
import type { TurnFailure } from "../agents/agent-process.js";

/** Sorts what `runTurn` or `steer` threw into the three ways the router answers it. */
export function classifyTurnError(error: unknown): TurnFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof RateLimitError) {
    return { kind: "rate_limit", resetAt: error.resetAt, message };
  }
  if (error instanceof ClaudeTimeoutError) return { kind: "timeout", message };
  if (isRateLimitError(error)) return { kind: "rate_limit", resetAt: undefined, message };
  return { kind: "crash", message };
}

/** The local reply a rate-limited message gets at once. */
export function fallbackText(retryAt: Date, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((retryAt.getTime() - now) / 1000));
  return (
    `The agent hit a rate limit, so this is an automatic reply. Your message is kept and ` +
    `will be retried at ${retryAt.toISOString()} (in about ${seconds}s).`
  );
}

/** What the user sees when a turn timed out or its process failed. */
export function errorText(
  failure: TurnFailure | { kind: "result"; subtype: string; text: string },
) {
  switch (failure.kind) {
    case "timeout":
      return `The agent did not answer in time (${failure.message}).`;
    case "result":
      // Claude Code marks an API error's result `success` with is_error: no kind worth naming.
      return failure.subtype === "success" || failure.subtype === "error"
        ? `The agent's turn failed: ${failure.text}`
        : `The agent's turn failed (${failure.subtype}): ${failure.text}`;
    default:
      return `The agent failed: ${failure.message}`;
  }
}

/**
 * The steered messages whose texts a failed turn handed back through
 * `popPendingSteers()`, in order, each text matching one message.
 */
export function matchPendingSteers<T extends { text: string }>(
  steered: T[],
  pending: string[],
): T[] {
  const remaining = [...pending];
  return steered.filter((message) => {
    const index = remaining.findIndex(
      (text) => text === message.text || text.includes(message.text),
    );
    if (index === -1) return false;
    remaining.splice(index, 1);
    return true;
  });
}
