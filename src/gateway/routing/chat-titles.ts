import type { ChannelSettings } from "../store/channel-settings.js";

/** A chat title longer than this is cut (a channel list shows a line of it). */
const MAX_CHAT_TITLE = 120;

/**
 * The chat titles sources give with their messages (`meta.chatTitle`: a Telegram group's
 * title, a private chat's person), stored on the channel when new or changed, so the page
 * names a chat as its platform does. Best effort: a title not stored comes again with the
 * next message.
 */
export class ChatTitles {
  readonly #settings: ChannelSettings;
  /** The title last stored per channel, so an unchanged one costs no write. */
  readonly #known = new Map<string, string>();

  constructor(settings: ChannelSettings) {
    this.#settings = settings;
  }

  note(channelId: string, title: unknown): void {
    if (typeof title !== "string") return;
    const clean = title.replace(/\s+/g, " ").trim().slice(0, MAX_CHAT_TITLE);
    if (clean === "" || this.#known.get(channelId) === clean) return;
    this.#known.set(channelId, clean);
    void this.#settings.noteChatTitle(channelId, clean).catch(() => {
      this.#known.delete(channelId);
    });
  }
}
