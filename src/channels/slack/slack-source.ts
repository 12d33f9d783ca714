/**
 * Slack as a channel source: the chat kit (`ChatSource`) over Slack (`SlackPlatform`). Each
 * thread is the channel `slack:<team id>:<channel id>:<thread ts>`. Everything the kit does (the
 * reply ledger, approvals as buttons, progress edits, pairing, commands) it does here.
 */
import { ChatSource } from "../kit/chat-source.js";
import type { ChatSourceSettings } from "../kit/chat-source-options.js";
import { SlackEventsApi } from "./slack-events-api.js";
import { SlackPlatform } from "./slack-platform.js";

/**
 * Slack's side of a source's options: `allow` takes Slack user ids or channel ids, and
 * `groups: "mention"` (the default) answers in channels only when mentioned or in the bot's
 * threads.
 */
export interface SlackSourceOptions extends ChatSourceSettings {
  /** `xoxb-...`. Never logged. */
  botToken: string;
  /** `xapp-...`, for Socket Mode; without it, events come only over HTTP. Never logged. */
  appToken?: string | undefined;
  /** The signing secret: with it, events are taken over HTTP too (`POST /slack/events`). */
  signingSecret?: string | undefined;
  /** The Web API's base URL; default https://slack.com/api/. */
  apiUrl?: string | undefined;
  /** Socket Mode's wait before connecting again, and for a pong; default 5 s (tests shorten it). */
  socketRetryMs?: number | undefined;
}

export class SlackChannelSource extends ChatSource {
  readonly platform: SlackPlatform;
  /** The Events API's route, when a signing secret is given. */
  readonly webhook: SlackEventsApi | undefined;

  constructor(options: SlackSourceOptions) {
    const platform = new SlackPlatform({
      botToken: options.botToken,
      appToken: options.appToken,
      apiUrl: options.apiUrl,
      backoff: options.backoff,
      socketRetryMs: options.socketRetryMs,
    });
    super({
      ...options,
      platform,
      // A stranger's mention in a channel is ignored: a pairing code is for a private chat.
      pairing: "direct",
      badTokenHint:
        "Check --slack-bot-token-file and --slack-app-token-file (or RUDDER_SLACK_BOT_TOKEN and RUDDER_SLACK_APP_TOKEN).",
    });
    this.platform = platform;
    this.webhook =
      options.signingSecret === undefined
        ? undefined
        : new SlackEventsApi(options.signingSecret, platform);
  }
}
