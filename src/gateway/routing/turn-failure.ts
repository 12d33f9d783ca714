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

/** What the user sees when a turn failed, timed out, crashed or was stopped: plain words. */
export function errorText(
  failure: TurnFailure | { kind: "result"; subtype: string; text: string } | { kind: "stopped" },
) {
  switch (failure.kind) {
    case "stopped":
      return "Stopped: you interrupted this turn. The agent keeps the conversation; the next message goes on from here.";
    case "timeout":
      return `The agent did not answer in time (${failure.message}).`;
    case "result":
      return resultFailureText(failure.subtype, failure.text);
    case "rate_limit":
      return `The model's rate limit was reached: ${failure.message}`;
    default:
      return `The agent process crashed: ${failure.message}`;
  }
}

/**
 * A failed result in words a person understands: what went wrong first (the model overloaded,
 * refusing, the conversation too long, the process gone), then the engine's own text. Claude
 * Code marks an API error's result `success` with `is_error`, a subtype never shown.
 */
function resultFailureText(subtype: string, text: string): string {
  const said = text.trim();
  const detail = said === "" ? "" : ` (${said})`;
  if (/\b529\b|overloaded/i.test(said)) {
    return `The model is overloaded right now, so the turn failed. Nothing is lost: Retry in a minute${detail}.`;
  }
  if (/\b429\b|rate.?limit/i.test(said)) return `The model's rate limit was reached${detail}.`;
  if (subtype === "refusal" || /\brefus(ed|al)\b/i.test(said)) {
    return `The model refused to answer this request${detail}.`;
  }
  if (/prompt is too long|context.?(window|length)|too many tokens/i.test(said)) {
    return `The conversation no longer fits the model's context window: Compact it or start a new conversation${detail}.`;
  }
  if (/\b40[13]\b|authentication|api.?key/i.test(said)) {
    return `The model refused the credentials (check the API key)${detail}.`;
  }
  if (subtype === "process_crashed" || subtype === "spawn_failed") {
    return `The agent process crashed: ${said}`;
  }
  if (subtype === "process_stopped") return `The agent process was ended: ${said}`;
  if (subtype === "error_max_turns") return `The agent stopped at its limit of turns${detail}.`;
  if (subtype === "error_during_execution") return `The turn was interrupted${detail}.`;
  return `The agent's turn failed: ${said || "no reason given"}`;
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
