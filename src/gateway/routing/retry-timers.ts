/**
 * One retry time per channel, for messages deferred by a rate limit. Arming
 * a later time than the current one moves it later (the limit lasts at
 * least that long); an earlier one is ignored. Timers are `unref()`ed.
 */
export class RetryTimers {
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #fire: (channelId: string) => void;
  #closed = false;

  constructor(fire: (channelId: string) => void) {
    this.#fire = fire;
  }

  /** Epoch ms of the channel's pending retry, or null when none is pending. */
  pendingUntil(channelId: string): number | null {
    return this.#timers.get(channelId)?.at ?? null;
  }

  arm(channelId: string, at: number): void {
    if (this.#closed) return;
    const current = this.#timers.get(channelId);
    if (current && current.at >= at) return;
    if (current) clearTimeout(current.timer);
    const timer = setTimeout(
      () => {
        this.#timers.delete(channelId);
        this.#fire(channelId);
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    this.#timers.set(channelId, { at, timer });
  }

  close(): void {
    this.#closed = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
