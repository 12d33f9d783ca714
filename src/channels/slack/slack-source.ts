/**
 * Slack as a channel source: the chat kit (`ChatSource`) over Slack (`SlackPlatform`). Each
 * thread is the channel `slack:<team id>:<channel id>:<thread ts>`. Everything the kit does (the
 * reply ledger, approvals as buttons, progress edits, pairing, commands) it does here.
 */
import type {
  ChannelSource,
  DeliveryMeta,
  SourceContext,
  SourceDelivery,
} from "../../gateway/channel-source.js";
import type { Backoff } from "../kit/backoff.js";
import { type AttachmentHandler, ChatSource } from "../kit/chat-source.js";
import { SlackEventsApi } from "./slack-events-api.js";
import { SlackPlatform } from "./slack-platform.js";

export interface SlackSourceOptions {
  /** `xoxb-...`. Never logged. */
  botToken: string;
  /** `xapp-...`, for Socket Mode; without it, events come only over HTTP. Never logged. */
  appToken?: string | undefined;
  /** The signing secret: with it, events are taken over HTTP too (`POST /slack/events`). */
  signingSecret?: string | undefined;
  /** Slack user ids or channel ids whose messages reach the agents; empty: pairing mode. */
  allow: readonly string[];
  /** The Web API's base URL; default https://slack.com/api/. */
  apiUrl?: string | undefined;
  /** In channels: answer only when mentioned or in the bot's threads (default), or always. */
  groups?: "mention" | "all" | undefined;
  backoff?: Backoff | undefined;
  /** Socket Mode's wait before connecting again, and for a pong; default 5 s (tests shorten it). */
  socketRetryMs?: number | undefined;
  sendTimeoutMs?: number | undefined;
  freshnessMs?: number | undefined;
  now?: (() => number) | undefined;
  attachments?: AttachmentHandler | undefined;
  logger?: ((line: string) => void) | undefined;
}

export class SlackChannelSource implements ChannelSource {
  readonly name = "slack";
  readonly platform: SlackPlatform;
  /** The Events API's route, when a signing secret is given. */
  readonly webhook: SlackEventsApi | undefined;
  readonly #kit: ChatSource;

  constructor(options: SlackSourceOptions) {
    this.platform = new SlackPlatform({
      botToken: options.botToken,
      appToken: options.appToken,
      apiUrl: options.apiUrl,
      backoff: options.backoff,
      socketRetryMs: options.socketRetryMs,
    });
    this.webhook =
      options.signingSecret === undefined
        ? undefined
        : new SlackEventsApi(options.signingSecret, this.platform);
    this.#kit = new ChatSource({
      platform: this.platform,
      allow: options.allow,
      groups: options.groups,
      // A stranger's mention in a channel is ignored: a pairing code is for a private chat.
      pairing: "direct",
      backoff: options.backoff,
      sendTimeoutMs: options.sendTimeoutMs,
      freshnessMs: options.freshnessMs,
      now: options.now,
      attachments: options.attachments,
      badTokenHint:
        "Check --slack-bot-token-file and --slack-app-token-file (or RUDDER_SLACK_BOT_TOKEN and RUDDER_SLACK_APP_TOKEN).",
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

  /** Resolves when receiving has ended: stopped, or a token was rejected. */
  finished(): Promise<void> {
    return this.#kit.finished();
  }
}
