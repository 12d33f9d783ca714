import type { MessageRecord } from "./store/store.js";

/**
 * The messages this worker has routed (id -> channel), so that a stored one routed again (a
 * catch-up after missed wake-ups finds it once more) is not run twice. Bounded: past `limit`
 * the oldest is forgotten first.
 */
export class RoutedMessages {
  readonly #channels = new Map<string, string>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  add(message: MessageRecord): void {
    this.#channels.set(message.id, message.channelId);
    if (this.#channels.size > this.#limit) {
      const oldest = this.#channels.keys().next().value;
      if (oldest !== undefined) this.#channels.delete(oldest);
    }
  }

  has(messageId: string): boolean {
    return this.#channels.has(messageId);
  }

  /** Forgets the channel's messages: it is no longer driven here. */
  forgetChannel(channelId: string): void {
    for (const [id, channel] of this.#channels) {
      if (channel === channelId) this.#channels.delete(id);
    }
  }
}
