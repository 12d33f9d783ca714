import type { ChildExit } from "./claude-child.js";
import { RateLimitError } from "./errors.js";
import type { NdjsonError } from "./ndjson.js";
import { isRateLimitLine, parseResetTime } from "./rate-limit.js";
import { combineResults, failedTurn, type ResultLine, type TurnResult } from "./turn-result.js";
import type { TurnState } from "./turn-state.js";

export interface OutcomeContext {
  costBefore: number;
  sessionId: string | null;
  /** Prepended to the result text when the turn had to start a new session. */
  freshStartNote: string | undefined;
  /** How errors name the engine; default `Claude CLI`. */
  engineName?: string | undefined;
}

export type TurnOutcome = { result: TurnResult } | { error: Error };

/**
 * The outcome of a turn whose messages were all answered: a `RateLimitError` if any of its
 * results was refused for a limit (structured fields first, text as a backstop), otherwise
 * the combined result, errors included.
 */
export function completedOutcome(state: TurnState, context: OutcomeContext): TurnOutcome {
  const limited = state.results.find((line) => isRateLimitLine(line));
  if (limited) {
    const text = typeof limited.result === "string" ? limited.result : "rate limited";
    const resetAt = parseResetTime(text);
    return {
      error: new RateLimitError(
        `${context.engineName ?? "Claude CLI"} rate limited: ${text}`,
        resetAt ? { resetAt } : {},
      ),
    };
  }
  return { result: answerOf(state.results, state, context) };
}

/**
 * The answer `lines` make (all of a turn's results, or one handed out before the turn ended),
 * with the note of a fresh start before its text.
 */
export function answerOf(
  lines: readonly ResultLine[],
  state: TurnState,
  context: OutcomeContext,
): TurnResult {
  const result = combineResults(lines, {
    costBefore: context.costBefore,
    intermediateCount: state.intermediateCount,
    sessionId: context.sessionId,
  });
  if (context.freshStartNote) result.result = `${context.freshStartNote}\n\n${result.result}`;
  return result;
}

/** A turn the runner itself saw fail, keeping whatever results had arrived. */
export function failedOutcome(
  state: TurnState,
  subtype: string,
  message: string,
  context: OutcomeContext,
): TurnResult {
  const partial =
    state.results.length > 0
      ? combineResults(state.results, {
          costBefore: context.costBefore,
          intermediateCount: state.intermediateCount,
          sessionId: context.sessionId,
        })
      : undefined;
  const result = failedTurn(subtype, message, partial, context.sessionId);
  result.intermediateCount = state.intermediateCount;
  return result;
}

/** `process_crashed` (with exit code or signal) or `spawn_failed`, plus the stderr tail. */
export function describeExit(
  exit: ChildExit,
  binary: string,
  stderrTail: string,
  engineName = "Claude CLI",
): { subtype: string; message: string } {
  const how = exit.spawnError
    ? `could not be started (${binary}: ${exit.spawnError.message})`
    : `exited with ${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`} before the turn finished`;
  const tail = stderrTail ? `\nstderr (last lines):\n${stderrTail}` : "";
  return {
    subtype: exit.spawnError ? "spawn_failed" : "process_crashed",
    message: `${engineName} ${how}.${tail}`,
  };
}

/**
 * A stdout line over the runner's cap ends the turn: the runner cannot read what the line
 * said (a reply, a tool result, the result itself), so waiting would only end in a timeout.
 */
export function describeLineTooLong(
  error: NdjsonError,
  maxLineLength: number,
): { subtype: string; message: string } {
  const kind = /"type"\s*:\s*"([a-z_]+)"/.exec(error.excerpt)?.[1];
  const what = kind ? `an "${kind}" line` : "a line";
  return {
    subtype: "output_too_long",
    message:
      `The agent wrote ${what} longer than the runner's cap of ${formatCap(maxLineLength)}, ` +
      "so the runner could not read it and ended the turn. What that line carried (its text " +
      "or tool output) and anything the agent said after it in this turn is lost; the agent " +
      "was stopped, and the next message continues the conversation. The line began: " +
      error.excerpt.slice(0, 120),
  };
}

/** A line over the cap that came while no turn ran: nothing but the line itself was lost. */
export function describeDroppedLine(error: NdjsonError, maxLineLength: number): string {
  const kind = /"type"\s*:\s*"([a-z_]+)"/.exec(error.excerpt)?.[1];
  const what = kind ? `an "${kind}" line` : "a line";
  const size = error.length === undefined ? "" : ` of ${formatSize(error.length)}`;
  return (
    `The agent wrote ${what}${size} between turns, over the runner's cap of ` +
    `${formatCap(maxLineLength)}, so it was dropped unread; no turn was running, so nothing ` +
    `else was lost. The line began: ${error.excerpt.slice(0, 120)}`
  );
}

function formatSize(characters: number): string {
  const mebibytes = characters / (1024 * 1024);
  return `${characters} characters (${mebibytes.toFixed(1)} MiB)`;
}

function formatCap(characters: number): string {
  const mebibytes = characters / (1024 * 1024);
  return Number.isInteger(mebibytes) ? `${mebibytes} MiB` : `${characters} characters`;
}
