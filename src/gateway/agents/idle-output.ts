import type { EventBus } from "../event-bus.js";
import { storedMessage } from "../routing/settlements.js";
import type { GatewayStore } from "../store/store.js";
import { StreamJsonEventMapper } from "./stream-json-events.js";

export interface IdleOutputOptions {
  store: GatewayStore;
  bus: EventBus;
  /** The child announced its session (a wake-up turn starts with `system/init`). */
  onSession: (channelId: string, sessionId: string) => void;
  /** Keeps the store write in the router's tracked work (shutdown waits for it). */
  track: (work: Promise<unknown>) => void;
  logger?: (line: string) => void;
}

/**
 * What a channel's agent says between turns. A rudder agent wakes itself when
 * a background task ends after its turn; its lines are published like a
 * turn's, and its result is stored as a message answering nobody. A line too long to read
 * (`output_error` `line_dropped`) is stored and logged as an error notice saying so.
 */
export class IdleOutput {
  readonly #options: IdleOutputOptions;
  /** One mapper per channel: it remembers tool names across a wake-up's lines. */
  readonly #mappers = new Map<string, StreamJsonEventMapper>();

  constructor(options: IdleOutputOptions) {
    this.#options = options;
  }

  accept(channelId: string, line: Record<string, unknown>): void {
    const { bus, store } = this.#options;
    let mapper = this.#mappers.get(channelId);
    if (mapper === undefined) {
      mapper = new StreamJsonEventMapper();
      this.#mappers.set(channelId, mapper);
    }
    for (const event of mapper.map(line)) bus.publish({ ...event, channelId });
    if (line.type === "system" && line.subtype === "init" && typeof line.session_id === "string") {
      this.#options.onSession(channelId, line.session_id);
    }
    if (line.type === "output_error" && line.kind === "line_dropped") {
      this.#dropped(channelId, String(line.message));
      return;
    }
    if (line.type !== "result" || typeof line.result !== "string" || line.result === "") return;
    const kind = line.is_error === true ? "error" : "reply";
    const stored = store.insertAgentMessage(channelId, line.result, kind).then((message) => {
      const event = { type: kind, message: storedMessage(message), channelId } as const;
      bus.publish(event);
    });
    this.#options.track(stored);
  }

  #dropped(channelId: string, text: string): void {
    const { bus, store, logger } = this.#options;
    logger?.(`gateway: channel ${channelId}: ${text}`);
    const stored = store.insertSystemMessage(channelId, text, "error").then((message) => {
      bus.publish({ type: "error", message: storedMessage(message), channelId });
    });
    this.#options.track(stored);
  }
}
