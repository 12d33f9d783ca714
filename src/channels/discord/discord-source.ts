/**
 * Discord as a channel source: the chat kit (`ChatSource`) over discord.js
 * (`DiscordPlatform`). A mention of the bot in a guild channel opens a thread on it, the
 * channel `discord:<guild id>:<channel id>:<thread id>`, where the conversation goes on
 * without mentions (a forum post too); a DM is `discord:dm:<channel id>:<channel id>`.
 * Everything the kit does (the reply ledger, approvals as buttons, progress edits, pairing,
 * acknowledgements, commands) it does here.
 */
import type {
  ChannelSource,
  DeliveryMeta,
  SourceContext,
  SourceDelivery,
} from "../../gateway/channel-source.js";
import type { Backoff } from "../kit/backoff.js";
import { type AttachmentHandler, ChatSource } from "../kit/chat-source.js";
import { DiscordPlatform } from "./discord-platform.js";

export interface DiscordSourceOptions {
  /** The bot's token from the Developer Portal. Never logged. */
  token: string;
  /** User, channel or `role:<id>` ids whose messages reach the agents; empty: pairing mode. */
  allow: readonly string[];
  /** The REST base URL; default https://discord.com/api. */
  apiUrl?: string;
  backoff?: Backoff;
  sendTimeoutMs?: number;
  freshnessMs?: number;
  now?: () => number;
  attachments?: AttachmentHandler;
  logger?: (line: string) => void;
}

export class DiscordChannelSource implements ChannelSource {
  readonly name = "discord";
  readonly platform: DiscordPlatform;
  readonly #kit: ChatSource;

  constructor(options: DiscordSourceOptions) {
    this.platform = new DiscordPlatform({
      token: options.token,
      apiUrl: options.apiUrl,
      backoff: options.backoff,
    });
    this.#kit = new ChatSource({
      platform: this.platform,
      allow: options.allow,
      // Strangers are ignored in servers, offered a pairing code in DMs.
      pairing: "direct",
      backoff: options.backoff,
      sendTimeoutMs: options.sendTimeoutMs,
      freshnessMs: options.freshnessMs,
      now: options.now,
      attachments: options.attachments,
      badTokenHint: "Check --discord-token-file or RUDDER_DISCORD_TOKEN.",
      logger: options.logger,
    });
  }

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

  finished(): Promise<void> {
    return this.#kit.finished();
  }
}
