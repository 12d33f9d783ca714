import { Backoff } from "./backoff.js";
import { StoreUnavailableError } from "./store-unavailable-error.js";

/** What `GET /api/health` says of the store. */
export interface StoreStatus {
  ok: boolean;
  /** While it is not: the one line API clients get with their 503. */
  error?: string;
  /** While it is not: the seconds to wait before asking again (the next reconnect, at most). */
  retryAfterSeconds?: number;
}

export interface StoreHealthOptions {
  /** The database as logs may show it (the password hidden). */
  name: string;
  /** One statement that succeeds when the database is back (through the watched connections). */
  probe: () => Promise<unknown>;
  logger?: (line: string) => void;
  backoff?: Backoff;
}

type State = "up" | "down" | "restoring";

/**
 * Whether a networked store can be reached now, as its statements find out: a statement that
 * fails for want of a connection marks it down (`unavailable`), one that succeeds marks it
 * up (`reachable`). While down, a probe runs with capped, jittered backoff until one succeeds.
 * One line is logged when it is lost and one when it is back, however many statements and
 * connections failed meanwhile.
 *
 * When it comes back, the `onRestored` steps run first, in order (the worker re-validates its
 * leases there), and only then is it up again: `whenUp()` waiters (writes held during the
 * outage) go on after that, so nothing is acted on before the leases are known.
 */
export class StoreHealth {
  readonly #options: StoreHealthOptions;
  readonly #backoff: Backoff;
  readonly #restoredSteps: Array<() => Promise<void>> = [];
  #state: State = "up";
  #reason = "";
  #since = 0;
  #probe: NodeJS.Timeout | undefined;
  #checking = false;
  #waiters: Array<() => void> = [];
  #closed = false;

  constructor(options: StoreHealthOptions) {
    this.#options = options;
    this.#backoff = options.backoff ?? new Backoff();
  }

  get up(): boolean {
    return this.#state === "up";
  }

  status(): StoreStatus {
    return this.#state === "up"
      ? { ok: true }
      : {
          ok: false,
          error: this.#message(),
          retryAfterSeconds: this.#backoff.nextAtMostSeconds(),
        };
  }

  /**
   * A statement failed for want of a connection (`reason`: "connection refused", ...): marks the
   * store down and returns the error to throw.
   */
  unavailable(reason: string, cause?: unknown): StoreUnavailableError {
    if (this.#state !== "down" && !this.#closed) {
      if (this.#state === "up") {
        this.#since = Date.now();
        this.#options.logger?.(`gateway: ${this.#message(reason)}`);
      }
      this.#state = "down";
      this.#schedule();
    }
    this.#reason = reason;
    return new StoreUnavailableError(this.#message(), {
      cause,
      retryAfterSeconds: this.#backoff.nextAtMostSeconds(),
    });
  }

  /** While the store is not up: the error a statement is refused with, without trying it. */
  refusal(): StoreUnavailableError {
    return new StoreUnavailableError(this.#message(), {
      retryAfterSeconds: this.#backoff.nextAtMostSeconds(),
    });
  }

  /** A statement succeeded: when the store was down, it is being restored now. */
  reachable(): void {
    if (this.#state !== "down" || this.#closed) return;
    this.#state = "restoring";
    clearTimeout(this.#probe);
    this.#probe = undefined;
    void this.#restore();
  }

  /**
   * Something hints that connections were lost (a listening connection ended, an idle one
   * failed): probe at once, so the store is marked down only if it really is. Resolves with
   * whether it is up.
   */
  async check(): Promise<boolean> {
    if (this.#state !== "up" || this.#checking || this.#closed) return this.#state === "up";
    this.#checking = true;
    try {
      await this.#options.probe();
    } catch {
      // The probe's failure marked the store down (or it failed for another reason: not ours).
    } finally {
      this.#checking = false;
    }
    return this.#state === "up";
  }

  /** Runs `step` each time the store comes back, after the steps added before it. */
  onRestored(step: () => Promise<void>): void {
    this.#restoredSteps.push(step);
  }

  /** Resolves when the store is up (at once when it is), or when `signal` aborts. */
  whenUp(signal?: AbortSignal): Promise<void> {
    if (this.#state === "up" || this.#closed || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.#waiters.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#probe);
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  #message(reason = this.#reason): string {
    return `store unavailable: ${reason} to ${this.#options.name}; retrying`;
  }

  #schedule(): void {
    if (this.#probe !== undefined || this.#closed) return;
    this.#probe = setTimeout(() => {
      this.#probe = undefined;
      this.#options.probe().catch(() => {
        if (this.#state === "down") this.#schedule();
      });
    }, this.#backoff.next());
    this.#probe.unref();
  }

  async #restore(): Promise<void> {
    for (const step of this.#restoredSteps) {
      try {
        await step();
      } catch {
        // A step that found the store gone again marked it down; the next return runs all again.
      }
      if (this.#state !== "restoring") return;
    }
    if (this.#state !== "restoring" || this.#closed) return;
    this.#state = "up";
    this.#backoff.reset();
    const seconds = ((Date.now() - this.#since) / 1000).toFixed(1);
    this.#options.logger?.(`gateway: store back after ${seconds} s (${this.#options.name})`);
    for (const waiter of this.#waiters.splice(0)) waiter();
  }
}
