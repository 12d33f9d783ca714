/**
 * How the page names a Slack conversation (`meta.chatTitle`): where it is (`#channel`, or the
 * person in a DM) and the first words of the thread's first message, `#general: the deploy
 * failed again`. The first message is the event's own when it starts the thread, else read once
 * (`conversations.replies`, its first message); channel names from `conversations.info`; both
 * remembered. Best effort: a title Slack does not give (a failed call, a 429) is left out, and
 * the next message brings it.
 */
import type { WebClient } from "@slack/web-api";
import type { SlackMessageEvent } from "./slack-events.js";

/** Words of the first message in a title. */
const WORDS = 8;

export class SlackTitles {
  readonly #web: () => WebClient;
  /** `#name` by Slack channel id (a DM's is the person's, given by the caller). */
  readonly #places = new Map<string, string>();
  /** The first words by conversation (thread channel id). */
  readonly #starts = new Map<string, string>();

  constructor(web: () => WebClient) {
    this.#web = web;
  }

  /** The title of the conversation `channelId` that `event` belongs to; `person`: the sender. */
  async titleOf(
    channelId: string,
    event: SlackMessageEvent,
    person: string,
    direct: boolean,
  ): Promise<string | undefined> {
    const place = direct ? person : await this.#place(event.channel);
    const start = await this.#start(channelId, event);
    if (place === undefined) return undefined;
    return start === undefined || start === "" ? place : `${place}: ${start}`;
  }

  async #place(channel: string): Promise<string | undefined> {
    const known = this.#places.get(channel);
    if (known !== undefined) return known;
    try {
      const { channel: info } = await this.#web().conversations.info({ channel });
      if (info?.name === undefined) return undefined;
      const place = `#${info.name}`;
      this.#places.set(channel, place);
      return place;
    } catch {
      return undefined;
    }
  }

  async #start(channelId: string, event: SlackMessageEvent): Promise<string | undefined> {
    const known = this.#starts.get(channelId);
    if (known !== undefined) return known;
    let text = event.text;
    if (event.thread_ts !== undefined && event.thread_ts !== event.ts) {
      try {
        const { messages } = await this.#web().conversations.replies({
          channel: event.channel,
          ts: event.thread_ts,
          limit: 1,
        });
        text = messages?.[0]?.text;
      } catch {
        return undefined;
      }
    }
    if (text === undefined) return undefined;
    const start = firstWords(text);
    this.#starts.set(channelId, start);
    return start;
  }
}

/** The first words of a Slack message as people read it: mentions out, links as their labels. */
export function firstWords(text: string): string {
  const words = text
    .replace(/<@[A-Z0-9]+>/g, " ")
    .replace(/<[^|>]+\|([^>]+)>/g, "$1")
    .replace(/<([^>]+)>/g, "$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .split(/\s+/)
    .filter((word) => word !== "");
  return words.length > WORDS ? `${words.slice(0, WORDS).join(" ")} ...` : words.join(" ");
}
