import type {
  ChannelSource,
  DeliveryMeta,
  SourceContext,
  SourceDelivery,
} from "../../gateway/channel-source.js";
import type { Backoff } from "../kit/backoff.js";
import { type AttachmentHandler, ChatSource } from "../kit/chat-source.js";
import { TelegramPlatform } from "./telegram-platform.js";

export { TELEGRAM_CHANNEL_PREFIX } from "./telegram-updates.js";

export interface TelegramSourceOptions {
  /** The bot's token from BotFather. Never logged. */
  token: string;
  /** Telegram user ids or chat ids whose messages reach the agents; empty: pairing mode. */
  allow: readonly string[];
  /** The Bot API's address; default https://api.telegram.org. */
  apiUrl?: string;
  /** `getUpdates`' long-poll timeout; default 30 seconds. */
  pollTimeoutSeconds?: number;
  /** Where the next update offset is kept per bot, so a crash does not take an update twice. */
  stateDir?: string;
  /** After a failed call; default 1 s doubling up to 60 s. */
  backoff?: Backoff;
  /** A `sendMessage` without an answer this long is tried again; default 30 s. */
  sendTimeoutMs?: number;
  /** An unsent reply older than this is given up with a line in the channel; default 3 h. */
  freshnessMs?: number;
  /** The reply ledger's clock (tests move it on). */
  now?: () => number;
  /** In groups: answer only when mentioned, replied to or commanded (default), or always. */
  groups?: "mention" | "all";
  /** Media handling (see `AttachmentHandler`). */
  attachments?: AttachmentHandler;
  logger?: (line: string) => void;
}

/**
 * Telegram as a channel source: the chat kit (`ChatSource`) over the Bot API
 * (`TelegramPlatform`). Each chat is the channel `telegram:<chat id>`, each forum topic
 * `telegram:<chat id>:<topic id>`. Everything the kit does (the reply ledger, approvals as
 * buttons, progress edits, pairing, acknowledgements, commands) it does here.
 */
export class TelegramChannelSource implements ChannelSource {
  readonly name = "telegram";
  readonly #kit: ChatSource;

  constructor(options: TelegramSourceOptions) {
    const platform = new TelegramPlatform({
      token: options.token,
      apiUrl: options.apiUrl,
      pollTimeoutSeconds: options.pollTimeoutSeconds,
      stateDir: options.stateDir,
      backoff: options.backoff,
    });
    this.#kit = new ChatSource({
      platform,
      allow: options.allow,
      groups: options.groups,
      backoff: options.backoff,
      sendTimeoutMs: options.sendTimeoutMs,
      freshnessMs: options.freshnessMs,
      now: options.now,
      attachments: options.attachments,
      badTokenHint: "Check --telegram-token-file or RUDDER_TELEGRAM_TOKEN.",
      logger: options.logger,
    });
  }

  /** Replies sent again after a restart that may have gone out before (may repeat). */
  get recovered(): number {
    return this.#kit.recovered;
  }

  start(
    deliver: (channelId: string, text: string, meta?: DeliveryMeta) => Promise<SourceDelivery>,
    context?: SourceContext,
  ): Promise<void> {
    return this.#kit.start(deliver, context);
  }

  stop(): Promise<void> {
    return this.#kit.stop();
  }

  /** Resolves when polling has ended: stopped, or the token was rejected. */
  finished(): Promise<void> {
    return this.#kit.finished();
  }
}
