/**
 * When an agent process may be started. Node's `spawn` holds the event loop until the child
 * has exec'd (about 80 ms a spawn on a loaded 2-core machine), so starts made in a burst (a
 * backlog of one-shots, a process freed and the next channel admitted) held admission and
 * health behind them: POSTs were answered after seconds. Here starts go one per turn of the
 * event loop, in the order asked, each in a macrotask of its own (so a message's 202 is never
 * written after a start it set off, and the sockets are read between two starts), and none
 * while a message is being stored (`admitting`), for at most `maxDeferMs`, so a steady stream
 * of messages cannot hold agents back for ever.
 */

/** How long starts wait at most for messages being stored to be done (ms). */
const DEFAULT_MAX_DEFER_MS = 200;
/** How often a deferred start looks again whether the messages are stored. */
const RECHECK_MS = 2;

export interface AgentStartsOptions {
  /** Whether a message is being stored now (its POST not yet answered). */
  admitting?: () => boolean;
  maxDeferMs?: number;
}

export class AgentStarts {
  readonly #waiting: Array<() => void> = [];
  readonly #admitting: () => boolean;
  readonly #maxDeferMs: number;
  #scheduled = false;
  #deferredSince: number | undefined;
  #closed = false;

  constructor(options: AgentStartsOptions = {}) {
    this.#admitting = options.admitting ?? (() => false);
    this.#maxDeferMs = options.maxDeferMs ?? DEFAULT_MAX_DEFER_MS;
  }

  /** How many starts wait for their turn. */
  get size(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves when a process may be started: after the starts asked for before this one, in a
   * macrotask of its own. The caller starts it synchronously on resolution (in the same
   * microtask run). Resolves at once after `close()`: the caller then finds the router closed.
   */
  next(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.#schedule();
    });
  }

  /** Lets every waiting start go (the router is closing; they start nothing). */
  close(): void {
    this.#closed = true;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  #schedule(delayMs = 0): void {
    if (this.#scheduled || this.#waiting.length === 0 || this.#closed) return;
    this.#scheduled = true;
    if (delayMs === 0) setImmediate(() => this.#grant());
    else setTimeout(() => this.#grant(), delayMs);
  }

  #grant(): void {
    this.#scheduled = false;
    if (this.#waiting.length === 0) return;
    if (this.#admitting()) {
      const now = performance.now();
      this.#deferredSince ??= now;
      if (now - this.#deferredSince < this.#maxDeferMs) {
        this.#schedule(RECHECK_MS);
        return;
      }
    }
    this.#deferredSince = undefined;
    this.#waiting.shift()?.();
    this.#schedule();
  }
}
