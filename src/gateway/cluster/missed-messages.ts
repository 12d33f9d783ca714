/**
 * The safety net under wake-ups: a message stored for a channel this worker holds reaches its
 * router by a wake-up, a delivery here, a take-over or a catch-up. Should all of them miss it,
 * nothing else would: the channel's lease stays live, so no other worker's sweep takes it, and
 * the message waits unanswered for ever. So once a lease period the worker looks for such
 * messages and routes them, each with a log line that names it.
 */
import type { MessageRecord } from "../store/store.js";
import { isStoreUnavailable } from "../store/store-unavailable-error.js";

export interface MissedMessagesOptions {
  store: { listUnanswered(): Promise<MessageRecord[]> };
  /** Whether nothing here holds the message (see `Router.unrouted`). */
  unrouted: (message: MessageRecord) => boolean;
  /** Whether this worker drives the channel now. */
  holds: (channelId: string) => boolean;
  /** Resolves once a channel just taken is ready to route (its session restored). */
  ready: (channelId: string) => Promise<void> | undefined;
  route: (message: MessageRecord) => void;
  logger?: ((line: string) => void) | undefined;
  /** `sweep` looks once in this many calls (the renewal calls it every third of a lease). */
  every?: number;
}

/**
 * A message is taken for missed only when two looks in a row find it unanswered, on a channel
 * held here and idle, and never routed here: one being stored and routed at the first look is
 * routed by the second.
 */
export class MissedMessages {
  readonly #options: MissedMessagesOptions;
  #calls = 0;
  /** What the last look found missed. */
  #seen = new Set<string>();

  constructor(options: MissedMessagesOptions) {
    this.#options = options;
  }

  /** Looks (on every `every`th call) and routes what two looks in a row found missed. */
  async sweep(): Promise<void> {
    this.#calls += 1;
    if (this.#calls % (this.#options.every ?? 3) !== 0) return;
    try {
      await this.#look();
    } catch (error) {
      // An unreachable store is logged once by its health; the next look tries again.
      if (isStoreUnavailable(error)) return;
      this.#options.logger?.(`gateway: the look for missed messages failed: ${String(error)}`);
    }
  }

  async #look(): Promise<void> {
    const { store, unrouted, holds, ready, route, logger } = this.#options;
    const missed = (message: MessageRecord) => holds(message.channelId) && unrouted(message);
    const seen = new Set<string>();
    for (const message of await store.listUnanswered()) {
      if (!missed(message)) continue;
      seen.add(message.id);
      if (!this.#seen.has(message.id)) continue;
      await ready(message.channelId);
      if (!missed(message)) continue;
      logger?.(
        `gateway: message ${message.id} of channel ${message.channelId} was stored but never routed here (a wake-up was missed); routing it now`,
      );
      route(message);
    }
    this.#seen = seen;
  }
}
