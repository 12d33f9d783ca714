/**
 * The context a chat source test lends its source, as the gateway would: the channel's events
 * from an `EventBus` (from now on, nothing replayed) and, unless given, no channels known.
 */
import type { SourceContext } from "../../src/gateway/channel-source.js";
import type { EventBus } from "../../src/gateway/event-bus.js";

export function busSourceContext(
  bus: EventBus,
  context: Omit<SourceContext, "subscribe" | "channelIds"> &
    Partial<Pick<SourceContext, "channelIds">>,
): SourceContext {
  return {
    subscribe: (channelId, listener) =>
      bus.subscribe(channelId, (numbered) => listener(numbered.event), 0),
    channelIds: async () => [],
    ...context,
  };
}
