/**
 * The leases of chat sources that keep one connection per cluster (`ChatPlatform.exclusive`):
 * a row `source:<name>` in the channel lease table, renewed with the channel leases by
 * `ChannelOwnership`'s ticks, so a dead holder's lease runs out like a channel's and the next
 * tick of another worker takes it: within a lease and a third of one.
 */
import { RESERVED_CHANNEL_PREFIX } from "../channel-source.js";
import type { WorkerLeases } from "../store/shared-store.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";

/** Lease keys of sources: no channel id begins so (`RESERVED_CHANNEL_PREFIX`). */
export const SOURCE_LEASE_PREFIX = RESERVED_CHANNEL_PREFIX;

export function isSourceLease(key: string): boolean {
  return key.startsWith(SOURCE_LEASE_PREFIX);
}

interface Wanted {
  held: boolean;
  /** Aborts the running `receive` when the lease is lost. */
  lost: AbortController | undefined;
  /** Wakes the loop waiting to take the lease. */
  wake: () => void;
}

export class SourceLeases {
  readonly #leases: WorkerLeases;
  readonly #log: (line: string) => void;
  readonly #wanted = new Map<string, Wanted>();
  /** Shutting down: no lease is taken any more. */
  #closed = false;

  constructor(leases: WorkerLeases, log: (line: string) => void) {
    this.#leases = leases;
    this.#log = log;
  }

  /**
   * Runs `receive` each time this worker takes the source's lease, with a signal aborted when
   * the lease is lost or `signal` aborts. Resolves once `signal` aborts, or when `receive`
   * ends on its own while the lease is held; the lease is released then.
   */
  async run(
    name: string,
    receive: (signal: AbortSignal) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    const key = `${SOURCE_LEASE_PREFIX}${name}`;
    if (this.#wanted.has(key)) throw new Error(`the ${name} source receives here already`);
    let wake = () => {};
    const wanted: Wanted = { held: false, lost: undefined, wake: () => wake() };
    this.#wanted.set(key, wanted);
    let waitingSaid = false;
    try {
      await this.#take(key, wanted);
      while (!signal.aborted) {
        if (!wanted.held) {
          if (!waitingSaid) {
            this.#log(`${name}: another worker receives (lease ${key}); this one waits`);
            waitingSaid = true;
          }
          await new Promise<void>((resolve) => {
            const done = () => {
              signal.removeEventListener("abort", done);
              resolve();
            };
            wake = done;
            signal.addEventListener("abort", done, { once: true });
          });
          continue;
        }
        waitingSaid = false;
        this.#log(`${name}: this worker receives (lease ${key})`);
        const lost = new AbortController();
        wanted.lost = lost;
        await receive(AbortSignal.any([signal, lost.signal]));
        wanted.lost = undefined;
        if (!lost.signal.aborted) return;
      }
    } finally {
      this.#wanted.delete(key);
      if (wanted.held) await this.#leases.release(key).catch(() => {});
    }
  }

  /** Takes each wanted lease not held now (its holder released it, or died and it ran out). */
  async takeWanted(): Promise<void> {
    for (const [key, wanted] of this.#wanted) await this.#take(key, wanted);
  }

  /**
   * After a renewal that kept `kept` (every lease of this worker): a held source lease not
   * among them is lost; one kept but not held (after a lapse) is held again; one nobody here
   * wants any more (its source stopped during a lapse) is released.
   */
  renewed(kept: ReadonlySet<string>): void {
    for (const [key, wanted] of this.#wanted) {
      if (wanted.held && !kept.has(key)) this.#lose(key, wanted, "lost its lease");
      else if (!wanted.held && kept.has(key) && !this.#closed) {
        wanted.held = true;
        wanted.wake();
      }
    }
    for (const key of kept) {
      if (isSourceLease(key) && !this.#wanted.has(key))
        void this.#leases.release(key).catch(() => {});
    }
  }

  /** No renewal for a whole lease: another worker may hold these leases by now. */
  lapsed(): void {
    for (const [key, wanted] of this.#wanted) {
      if (wanted.held) this.#lose(key, wanted, "could not renew its lease");
    }
  }

  /** The worker shuts down: it takes no source lease any more. */
  close(): void {
    this.#closed = true;
  }

  async #take(key: string, wanted: Wanted): Promise<void> {
    if (wanted.held || this.#closed) return;
    try {
      if (!(await this.#leases.claim(key))) return;
    } catch (error) {
      // An unreachable store is logged once by its health; the next tick tries again.
      if (!isStoreUnavailable(error)) this.#log(`gateway: taking ${key} failed: ${String(error)}`);
      return;
    }
    if (!this.#wanted.has(key) || this.#closed) {
      await this.#leases.release(key).catch(() => {});
      return;
    }
    wanted.held = true;
    wanted.wake();
  }

  #lose(key: string, wanted: Wanted, why: string): void {
    wanted.held = false;
    this.#log(`gateway: this worker ${why} (${key}); it stops receiving`);
    wanted.lost?.abort();
  }
}
