import type { GatewayStore } from "../store/store.js";
import { type ChannelState, newChannelState } from "./channel-state.js";

/**
 * What the router knows of each channel it has seen, by id: a channel comes into being when
 * first asked for (`get`); `find` only looks. Its session id is written to the store when it
 * changes (`rememberSession`).
 */
export class ChannelStates {
  readonly #channels = new Map<string, ChannelState>();
  readonly #store: GatewayStore;

  constructor(store: GatewayStore) {
    this.#store = store;
  }

  /** The channel's state, a new idle one if the router has not seen it. */
  get(channelId: string): ChannelState {
    let channel = this.#channels.get(channelId);
    if (!channel) {
      channel = newChannelState(channelId);
      this.#channels.set(channelId, channel);
    }
    return channel;
  }

  find(channelId: string): ChannelState | undefined {
    return this.#channels.get(channelId);
  }

  values(): IterableIterator<ChannelState> {
    return this.#channels.values();
  }

  /** Notes the channel's conversation (its next turn resumes it) and stores it if it changed. */
  async rememberSession(
    channel: ChannelState,
    sessionId: string | null | undefined,
  ): Promise<void> {
    if (!sessionId || sessionId === channel.sessionId) return;
    channel.sessionId = sessionId;
    await this.#store.setChannelSession(channel.id, sessionId);
  }
}
