import type { Disposition } from "../events.js";
import type { MessageRecord } from "../store/store.js";

/**
 * The messages this worker has routed (id -> channel and the route each took first), so that
 * a stored one routed again is not run twice: a catch-up after missed wake-ups finds it once
 * more, or lists it while the delivery that stored it is still waiting for its insert, which
 * then tells its client the route the catch-up chose. Bounded: past `limit` the oldest is
 * forgotten first.
 */
export class RoutedMessages {
  readonly #routes = new Map<string, { channelId: string; disposition: Disposition }>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  /** Notes the message routed here; one routed again (a replay, a retry) keeps its first route. */
  add(message: MessageRecord, disposition: Disposition): void {
    if (this.#routes.has(message.id)) return;
    this.#routes.set(message.id, { channelId: message.channelId, disposition });
    if (this.#routes.size > this.#limit) {
      const oldest = this.#routes.keys().next().value;
      if (oldest !== undefined) this.#routes.delete(oldest);
    }
  }

  /** The route the message took when first routed here; undefined if not routed (or forgotten). */
  route(messageId: string): Disposition | undefined {
    return this.#routes.get(messageId)?.disposition;
  }

  /** Forgets the channel's messages: it is no longer driven here. */
  forgetChannel(channelId: string): void {
    for (const [id, route] of this.#routes) {
      if (route.channelId === channelId) this.#routes.delete(id);
    }
  }
}
