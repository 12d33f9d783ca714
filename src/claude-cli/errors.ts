/** Thrown by `runTurn` when a turn does not finish in time; the process has been ended. */
export class ClaudeTimeoutError extends Error {
  override readonly name = "ClaudeTimeoutError";
  readonly timeoutMs: number;

  constructor(timeoutMs: number, options?: ErrorOptions, engineName = "Claude CLI") {
    super(`${engineName} timed out after ${formatSeconds(timeoutMs)}`, options);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Thrown by `runTurn` when the API refused the turn for a rate or usage limit, so the caller
 * can fall back and defer. `resetAt` is set when the CLI said when the limit resets.
 */
export class RateLimitError extends Error {
  override readonly name = "RateLimitError";
  readonly resetAt: Date | undefined;

  constructor(message: string, options: ErrorOptions & { resetAt?: Date } = {}) {
    super(message, options);
    this.resetAt = options.resetAt;
  }
}

/** `1000` -> `1s`, `1500` -> `1.5s`, `250` -> `0.25s`: whole seconds stay whole. */
export function formatSeconds(milliseconds: number): string {
  const seconds = milliseconds / 1000;
  return `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(3))}s`;
}
