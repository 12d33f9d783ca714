/**
 * One retry time per channel, for messages deferred by a rate limit or held by a budget (then
 * with the text that told why, which messages coming meanwhile get too). Arming a later time
 * than the current one moves it later (the limit lasts at least that long); an earlier one is
 * ignored. Timers are `unref()`ed; one past what a Node timer holds (about 24.8 days: a monthly
 * budget's reset) waits in steps.
 */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

interface Pending {
  at: number;
  timer: NodeJS.Timeout;
  /** Why the channel's messages wait, for a budget; undefined for a rate limit. */
  heldText: string | undefined;
}

export class RetryTimers {
  readonly #timers = new Map<string, Pending>();
  readonly #fire: (channelId: string) => void;
  #closed = false;

  constructor(fire: (channelId: string) => void) {
    this.#fire = fire;
  }

  /** Epoch ms of the channel's pending retry, or null when none is pending. */
  pendingUntil(channelId: string): number | null {
    return this.#timers.get(channelId)?.at ?? null;
  }

  /** The text a budget's hold answered with, while the channel waits for that budget. */
  heldText(channelId: string): string | undefined {
    return this.#timers.get(channelId)?.heldText;
  }

  arm(channelId: string, at: number, heldText?: string): void {
    if (this.#closed) return;
    const current = this.#timers.get(channelId);
    if (current && current.at >= at) return;
    if (current) clearTimeout(current.timer);
    this.#timers.set(channelId, { at, timer: this.#timer(channelId, at), heldText });
  }

  /** The channels a budget holds, their retries dropped (their callers route them now). */
  takeHeld(): string[] {
    const held = [...this.#timers].filter(([, pending]) => pending.heldText !== undefined);
    for (const [channelId, pending] of held) {
      clearTimeout(pending.timer);
      this.#timers.delete(channelId);
    }
    return held.map(([channelId]) => channelId);
  }

  close(): void {
    this.#closed = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  #timer(channelId: string, at: number): NodeJS.Timeout {
    const timer = setTimeout(
      () => {
        const pending = this.#timers.get(channelId);
        if (pending === undefined) return;
        if (at - Date.now() > 0) {
          pending.timer = this.#timer(channelId, at);
          return;
        }
        this.#timers.delete(channelId);
        this.#fire(channelId);
      },
      Math.min(LONGEST_TIMER_MS, Math.max(0, at - Date.now())),
    );
    timer.unref();
    return timer;
  }
}
