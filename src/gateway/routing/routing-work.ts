import { isStoreUnavailable } from "../store/store-unavailable-error.js";

/**
 * The router's work in flight (turns, settlements, commands, retries): `idle()` waits for all
 * of it, and a failure is logged, never thrown, as nobody awaits the work itself. The store
 * being down is not logged here: its health logs that once.
 */
export class RoutingWork {
  readonly #work = new Set<Promise<unknown>>();
  readonly #logger: ((line: string) => void) | undefined;

  constructor(logger?: (line: string) => void) {
    this.#logger = logger;
  }

  track(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => {
      if (isStoreUnavailable(error)) return;
      this.#logger?.(`gateway: routing error: ${String(error)}`);
    });
    this.#work.add(tracked);
    void tracked.finally(() => this.#work.delete(tracked));
  }

  /** Resolves once the work started so far, and the work it started, is done. */
  async idle(): Promise<void> {
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
  }
}
