import type { AgentTurnResult } from "./agent-process.js";
import type { EventBus } from "./event-bus.js";
import type { StoredMessage } from "./events.js";
import type { GatewayStore, MessageRecord, Settlement, TurnRecord } from "./store/store.js";

/** How a message ended, for callers that wait on it (the scheduler). */
export interface SettledMessage {
  state: "answered" | "failed";
  reply: StoredMessage;
}

/** The part of a stored message that events carry. */
export function storedMessage(message: MessageRecord): StoredMessage {
  const { id, channelId, role, text, state, replyTo, kind, createdAt } = message;
  return { id, channelId, role, text, state, replyTo, kind, createdAt };
}

function turnRecord(result: AgentTurnResult): TurnRecord {
  return {
    result: result.result,
    costUsd: result.costUsd ?? result.totalCostUsd ?? null,
    usage: result.usage ?? null,
    durationMs: result.durationMs ?? null,
    numTurns: result.numTurns ?? null,
    isError: result.isError,
    subtype: result.subtype ?? null,
    sessionId: result.sessionId ?? null,
  };
}

/**
 * Writes how user messages ended (with the reply, fallback or error answering
 * them, and the turn's cost) and tells the bus and anyone waiting. A message
 * already answered is never answered again (`settle` then resolves to null,
 * else to the reply).
 */
export class Settlements {
  readonly #store: GatewayStore;
  readonly #bus: EventBus;
  readonly #waiters = new Map<string, Array<(settled: SettledMessage) => void>>();

  constructor(store: GatewayStore, bus: EventBus) {
    this.#store = store;
    this.#bus = bus;
  }

  /** Resolves when the message is answered or has failed (a deferral is not an end). */
  settled(messageId: string): Promise<SettledMessage> {
    return new Promise((resolve) => {
      const list = this.#waiters.get(messageId) ?? [];
      list.push(resolve);
      this.#waiters.set(messageId, list);
    });
  }

  async settle(
    messages: MessageRecord[],
    state: Settlement["state"],
    reply: Settlement["reply"],
    details: { result?: AgentTurnResult | undefined; retryAt?: Date | undefined } = {},
  ): Promise<StoredMessage | null> {
    const first = messages[0];
    if (!first) return null;
    const channelId = first.channelId;
    const record = await this.#store.settle({
      messageIds: messages.map((message) => message.id),
      state,
      reply,
      ...(details.retryAt ? { retryAt: details.retryAt.toISOString() } : {}),
      ...(details.result ? { turn: turnRecord(details.result) } : {}),
    });
    if (!record) return null;
    const message = storedMessage(record);
    for (const { id } of messages) {
      this.#bus.publish({ type: "message_state", messageId: id, state, channelId });
      if (state === "deferred") continue;
      for (const resolve of this.#waiters.get(id) ?? []) resolve({ state, reply: message });
      this.#waiters.delete(id);
    }
    if (reply.kind === "fallback") {
      const retryAt = (details.retryAt ?? new Date()).toISOString();
      this.#bus.publish({ type: "fallback", message, retryAt, channelId });
    } else if (reply.kind === "error") {
      this.#bus.publish({ type: "error", message, channelId });
    } else {
      this.#bus.publish({ type: "reply", message, channelId });
    }
    return message;
  }
}
