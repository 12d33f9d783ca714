import { ChatSource } from "../kit/chat-source.js";
import type { ChatSourceSettings } from "../kit/chat-source-options.js";
import { TelegramPlatform } from "./telegram-platform.js";

export { TELEGRAM_CHANNEL_PREFIX } from "./telegram-updates.js";

/**
 * Telegram's side of a source's options: `allow` takes Telegram user ids or chat ids, and
 * `groups: "mention"` (the default) answers when mentioned, replied to or commanded.
 */
export interface TelegramSourceOptions extends ChatSourceSettings {
  /** The bot's token from BotFather. Never logged. */
  token: string;
  /** The Bot API's address; default https://api.telegram.org. */
  apiUrl?: string;
  /** `getUpdates`' long-poll timeout; default 30 seconds. */
  pollTimeoutSeconds?: number;
  /** Where the next update offset is kept per bot, so a crash does not take an update twice. */
  stateDir?: string;
}

/**
 * Telegram as a channel source: the chat kit (`ChatSource`) over the Bot API
 * (`TelegramPlatform`). Each chat is the channel `telegram:<chat id>`, each forum topic
 * `telegram:<chat id>:<topic id>`. Everything the kit does (the reply ledger, approvals as
 * buttons, progress edits, pairing, acknowledgements, commands) it does here.
 */
export class TelegramChannelSource extends ChatSource {
  constructor(options: TelegramSourceOptions) {
    const platform = new TelegramPlatform({
      token: options.token,
      apiUrl: options.apiUrl,
      pollTimeoutSeconds: options.pollTimeoutSeconds,
      stateDir: options.stateDir,
      backoff: options.backoff,
    });
    super({
      ...options,
      platform,
      badTokenHint: "Check --telegram-token-file or RUDDER_TELEGRAM_TOKEN.",
    });
  }
}
