/**
 * Acknowledgements as reactions: eyes on a message when the bot takes it, turned into a check
 * mark when an answer goes out in its thread. Best effort, off the message's path: a reaction
 * that fails is only a missing emoji, never a lost message, so it is not in the reply ledger.
 */
import type { WebClient } from "@slack/web-api";

export const RECEIVED_REACTION = "eyes";
export const DONE_REACTION = "white_check_mark";

interface Reacted {
  channel: string;
  ts: string;
}

export class SlackReactions {
  readonly #web: () => WebClient | undefined;
  /** Messages showing eyes, by the conversation (thread channel id) they wait on. */
  readonly #waiting = new Map<string, Reacted[]>();

  constructor(web: () => WebClient | undefined) {
    this.#web = web;
  }

  received(channelId: string, channel: string, ts: string): void {
    const waiting = this.#waiting.get(channelId) ?? [];
    if (waiting.some((each) => each.ts === ts)) return;
    waiting.push({ channel, ts });
    this.#waiting.set(channelId, waiting);
    this.#call("reactions.add", { channel, timestamp: ts, name: RECEIVED_REACTION });
  }

  /** An answer went out in `channelId`: every message waiting there is done. */
  answered(channelId: string): void {
    const waiting = this.#waiting.get(channelId);
    if (waiting === undefined) return;
    this.#waiting.delete(channelId);
    for (const { channel, ts } of waiting) {
      this.#call("reactions.remove", { channel, timestamp: ts, name: RECEIVED_REACTION });
      this.#call("reactions.add", { channel, timestamp: ts, name: DONE_REACTION });
    }
  }

  #call(method: string, body: Record<string, string>): void {
    void this.#web()
      ?.apiCall(method, body)
      .catch(() => undefined);
  }
}
