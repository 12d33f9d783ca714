/**
 * The threads the bot is part of (it was mentioned or answered there, or the store has the
 * thread's conversation), where replies need no mention. Known from what this process saw and,
 * for a thread it has not seen (another worker's, or an earlier run's), from the store.
 */
import type { ReceiveContext } from "../kit/chat-platform.js";
import { slackChannelId } from "./slack-address.js";
import { knownConversations } from "./slack-catch-up.js";

export class SlackThreads {
  readonly #known = new Set<string>();
  /** One read of the store at a time; readers that come meanwhile share it. */
  #reading: Promise<void> | undefined;

  has(channelId: string): boolean {
    return this.#known.has(channelId);
  }

  add(channelId: string): void {
    this.#known.add(channelId);
  }

  /**
   * Resolves once `channelId` is known here, or the store has been read for it (one query of
   * the source's channels). Never rejects: a failed read leaves the thread unknown.
   */
  async lookUp(channelId: string, context: ReceiveContext | undefined): Promise<void> {
    if (this.#known.has(channelId) || context === undefined) return;
    this.#reading ??= knownConversations(context)
      .then((known) => {
        for (const { address } of known) this.#known.add(slackChannelId(address));
      })
      .catch(() => undefined)
      .finally(() => {
        this.#reading = undefined;
      });
    await this.#reading;
  }
}
