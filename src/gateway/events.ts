import type { AgentEvent } from "../agent/events.js";

export type MessageState = "received" | "steered" | "answered" | "deferred" | "failed";

export type Disposition = "started" | "steered" | "one_shot" | "deferred";

/** A stored message as the API returns it. */
export interface StoredMessage {
  id: string;
  channelId: string;
  role: "user" | "assistant" | "system";
  text: string;
  state: MessageState | null;
  /** For replies: the user message they answer. */
  replyTo: string | null;
  /** `reply`, `fallback`, `error`, or `user`. */
  kind: "user" | "reply" | "fallback" | "error";
  createdAt: string;
}

/**
 * What a channel's Server-Sent Events stream carries: the agent's own event
 * union (mapped from the child's stream-json lines), plus the gateway's
 * routing events. Every event has the channel it belongs to.
 */
export type GatewayEvent = (
  | AgentEvent
  | { type: "message_received"; message: StoredMessage; disposition: Disposition }
  | { type: "message_state"; messageId: string; state: MessageState }
  | { type: "reply"; message: StoredMessage }
  | { type: "fallback"; message: StoredMessage; retryAt: string }
  | { type: "error"; message: StoredMessage }
) & { channelId: string };
