import type { EventBus } from "../event-bus.js";

/** How long a worker that forwarded a message waits to hear whether the owner steered with it. */
export const FORWARD_WAIT_MS = 3000;

export interface ForwardWatch {
  /**
   * True once the channel's owner announces the message steered into its running turn; false
   * when it announces another state first, or none within `withinMs`.
   */
  steered(messageId: string, withinMs?: number): Promise<boolean>;
  close(): void;
}

/**
 * Watches a channel's events (every worker's, through the shared log) for what its owner did
 * with a message forwarded to it. Open it before storing the message, so that no announcement
 * comes too early to be seen.
 */
export function watchForwarded(bus: EventBus, channelId: string): ForwardWatch {
  const outcomes = new Map<string, boolean>();
  let waiter: { messageId: string; resolve: (steered: boolean) => void } | undefined;
  const unsubscribe = bus.listen(channelId, ({ event }) => {
    // The owner announces a message it routes either as received (with its disposition) or as
    // a change of state.
    const heard =
      event.type === "message_received"
        ? { id: event.message.id, steered: event.disposition === "steered" }
        : event.type === "message_state"
          ? { id: event.messageId, steered: event.state === "steered" }
          : undefined;
    if (heard === undefined || outcomes.has(heard.id)) return;
    outcomes.set(heard.id, heard.steered);
    if (waiter?.messageId === heard.id) waiter.resolve(heard.steered);
  });
  return {
    steered(messageId, withinMs = FORWARD_WAIT_MS) {
      const known = outcomes.get(messageId);
      if (known !== undefined) return Promise.resolve(known);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), withinMs);
        waiter = {
          messageId,
          resolve: (steered) => {
            clearTimeout(timer);
            resolve(steered);
          },
        };
      });
    },
    close: unsubscribe,
  };
}
