import type { Disposition, GatewayEvent, MessageState } from "../events.js";
import type { MessageRecord } from "../store/store.js";
import { storedMessage } from "./settlements.js";

/**
 * What the bus is told when the router routes a message: a new message is `message_received`
 * with the route it took; one routed again (a replay, a retry, a steer dispatched anew) only
 * moves to its new state.
 */
export function routedEvent(
  message: MessageRecord,
  fresh: boolean,
  disposition: Disposition,
  state: MessageState,
): GatewayEvent {
  const channelId = message.channelId;
  if (!fresh) return { type: "message_state", messageId: message.id, state, channelId };
  const current = { ...storedMessage(message), state };
  return { type: "message_received", message: current, disposition, channelId };
}
