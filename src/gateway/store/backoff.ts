/**
 * Delays between attempts to reach something that went away: doubling from `firstMs` up to
 * `maxMs`, each drawn between half and all of its step ("equal jitter"), so that workers that
 * lost the same database do not all come back in the same instant. `reset()` after a success.
 */
export class Backoff {
  readonly #firstMs: number;
  readonly #maxMs: number;
  #stepMs: number;

  constructor(firstMs = 250, maxMs = 5000) {
    this.#firstMs = firstMs;
    this.#maxMs = maxMs;
    this.#stepMs = firstMs;
  }

  /** The delay before the next attempt; each call moves the step on. */
  next(): number {
    const step = this.#stepMs;
    this.#stepMs = Math.min(this.#stepMs * 2, this.#maxMs);
    return Math.round(step / 2 + Math.random() * (step / 2));
  }

  /** The largest delay the next attempt can have, in whole seconds (for `Retry-After`). */
  nextAtMostSeconds(): number {
    return Math.max(1, Math.ceil(this.#stepMs / 1000));
  }

  reset(): void {
    this.#stepMs = this.#firstMs;
  }
}
