/**
 * Discord as a channel source: the chat kit (`ChatSource`) over discord.js
 * (`DiscordPlatform`). A mention of the bot in a guild channel opens a thread on it, the
 * channel `discord:<guild id>:<channel id>:<thread id>`, where the conversation goes on
 * without mentions (a forum post too); a DM is `discord:dm:<channel id>:<channel id>`.
 * Everything the kit does (the reply ledger, approvals as buttons, progress edits, pairing,
 * acknowledgements, commands) it does here.
 */
import { ChatSource } from "../kit/chat-source.js";
import type { ChatSourceSettings } from "../kit/chat-source-options.js";
import { DiscordPlatform } from "./discord-platform.js";

/**
 * Discord's side of a source's options: `allow` takes user, channel or `role:<id>` ids. No
 * `groups`: in a server the bot answers a mention by opening a thread, and in its threads always.
 */
export interface DiscordSourceOptions extends Omit<ChatSourceSettings, "groups"> {
  /** The bot's token from the Developer Portal. Never logged. */
  token: string;
  /** The REST base URL; default https://discord.com/api. */
  apiUrl?: string;
}

export class DiscordChannelSource extends ChatSource {
  readonly platform: DiscordPlatform;

  constructor(options: DiscordSourceOptions) {
    const platform = new DiscordPlatform({
      token: options.token,
      apiUrl: options.apiUrl,
      backoff: options.backoff,
    });
    super({
      ...options,
      platform,
      // Strangers are ignored in servers, offered a pairing code in DMs.
      pairing: "direct",
      badTokenHint: "Check --discord-token-file or RUDDER_DISCORD_TOKEN.",
    });
    this.platform = platform;
  }
}
