import { setTimeout as sleep } from "node:timers/promises";
import { parseChannelCommand } from "../../gateway/channel-command.js";
import type {
  ChannelSource,
  DeliveryMeta,
  SourceContext,
  SourceDelivery,
} from "../../gateway/channel-source.js";
import { GatewayClosedError } from "../../gateway/gateway-closed-error.js";
import {
  TelegramApi,
  TelegramApiError,
  type TelegramMessage,
  type TelegramUpdate,
} from "./telegram-api.js";
import { answerCommand } from "./telegram-commands.js";
import { OffsetFile } from "./telegram-offset.js";
import { type Backoff, DEFAULT_BACKOFF, retryDelayMs, TelegramOutbox } from "./telegram-outbox.js";
import { type ChatCommand, outboundText, parseCommand, refusalText } from "./telegram-text.js";
import { TypingIndicator } from "./telegram-typing.js";

type Deliver = (channelId: string, text: string, meta?: DeliveryMeta) => Promise<SourceDelivery>;

export interface TelegramSourceOptions {
  /** The bot's token from BotFather. Never logged. */
  token: string;
  /** Telegram user ids or chat ids whose messages reach the agents. Must not be empty. */
  allow: readonly string[];
  /** The Bot API's address; default https://api.telegram.org. */
  apiUrl?: string;
  /** `getUpdates`' long-poll timeout; default 30 seconds. */
  pollTimeoutSeconds?: number;
  /** Where the next update offset is kept per bot, so a crash does not take an update twice. */
  stateDir?: string;
  /** After a failed call; default 1 s doubling up to 60 s. */
  backoff?: Backoff;
  /** A reply's `sendMessage` without an answer this long is tried again; default 30 s. */
  sendTimeoutMs?: number;
  logger?: (line: string) => void;
}

/** Channels of this source are `telegram:<chat id>`. */
export const TELEGRAM_CHANNEL_PREFIX = "telegram:";

/** Strangers answered at most once each, remembered up to this many. */
const REMEMBERED_STRANGERS = 10_000;

/**
 * Telegram as a channel source, by long polling `getUpdates`. Each chat is
 * the channel `telegram:<chat id>`. Text from an allowed user or chat is
 * delivered like an HTTP message (stored first); the channel's replies,
 * fallbacks, errors and permission requests go back with `sendMessage`.
 * `/compact [focus]` and `/clear` go to the channel, which compacts or resets its
 * conversation; `/allow <id>` and `/deny <id> [note]` answer permission requests; `/start`,
 * `/help` and unknown commands get a short text. Anyone else is told once
 * that they are not allowed, with their id, and never reaches an agent.
 *
 * An update counts as processed once its text is delivered (or answered):
 * its offset goes to `stateDir` at once and to Telegram with the next poll
 * (or a last one at stop), so it is not taken twice. Failed calls back off;
 * a rejected token stops the source with one log line, and the gateway runs on.
 */
export class TelegramChannelSource implements ChannelSource {
  readonly name = "telegram";
  readonly #options: TelegramSourceOptions;
  readonly #allow: ReadonlySet<string>;
  readonly #api: TelegramApi;
  readonly #stopping = new AbortController();
  readonly #watched = new Map<string, () => void>();
  readonly #strangers = new Set<string>();
  readonly #log: (line: string) => void;
  #botName: string | undefined;
  #loop: Promise<void> = Promise.resolve();

  constructor(options: TelegramSourceOptions) {
    if (options.allow.length === 0) {
      throw new Error("the Telegram source needs an allow-list of user or chat ids");
    }
    this.#options = options;
    this.#allow = new Set(options.allow);
    this.#api = new TelegramApi({
      token: options.token,
      ...(options.apiUrl ? { baseUrl: options.apiUrl } : {}),
    });
    this.#log = options.logger ?? (() => {});
  }

  async start(deliver: Deliver, context?: SourceContext): Promise<void> {
    if (!context) throw new Error("the Telegram source needs the gateway's source context");
    const signal = AbortSignal.any([this.#stopping.signal, context.signal]);
    const outbox = new TelegramOutbox({
      api: this.#api,
      signal,
      backoff: this.#options.backoff ?? DEFAULT_BACKOFF,
      ...(this.#options.sendTimeoutMs === undefined
        ? {}
        : { sendTimeoutMs: this.#options.sendTimeoutMs }),
      logger: this.#log,
      onBadToken: (error) => this.#rejectToken(error),
    });
    const typing = new TypingIndicator(this.#api, signal);
    const session: Session = { deliver, context, outbox, typing, signal };
    for (const channelId of await context.channelIds()) {
      if (channelId.startsWith(TELEGRAM_CHANNEL_PREFIX)) this.#watch(session, channelId);
    }
    this.#loop = this.#poll(session)
      .catch((error: unknown) => this.#log(`telegram: polling ended: ${describe(error)}`))
      .finally(() => {
        for (const unsubscribe of this.#watched.values()) unsubscribe();
        this.#watched.clear();
      });
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#loop;
  }

  /** Resolves when polling has ended: stopped, or the token was rejected. */
  finished(): Promise<void> {
    return this.#loop;
  }

  #rejectToken(error: TelegramApiError): void {
    if (this.#stopping.signal.aborted) return;
    this.#log(
      `telegram: the Bot API rejected the bot token (${error.status}); the Telegram source stopped and the rest of the gateway runs on. Check --telegram-token-file or RUDDER_TELEGRAM_TOKEN.`,
    );
    this.#stopping.abort();
  }

  async #poll(session: Session): Promise<void> {
    const { signal } = session;
    const backoff = this.#options.backoff ?? DEFAULT_BACKOFF;
    const timeout = this.#options.pollTimeoutSeconds ?? 30;
    let offset: number | undefined;
    let confirmed: number | undefined;
    let offsetFile: OffsetFile | undefined;
    let offsetFailed = false;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (this.#botName === undefined) {
          const me = await this.#api.getMe(signal);
          this.#botName = me.username ?? "";
          this.#log(`telegram: polling as @${this.#botName}`);
          if (this.#options.stateDir !== undefined) {
            offsetFile = new OffsetFile(this.#options.stateDir, me.id);
            offset = offsetFile.read();
          }
        }
        const requested = offset;
        const updates = await this.#longPoll(offset, timeout, signal);
        // Only an answer proves Telegram saw the offset; an aborted poll may never have left.
        confirmed = requested;
        if (failures > 0) this.#log("telegram: the Bot API answers again");
        failures = 0;
        for (const update of updates) {
          if (offset !== undefined && update.update_id < offset) continue;
          await this.#handle(session, update);
          offset = update.update_id + 1;
          const failed = offsetFile?.write(offset);
          if (failed && !offsetFailed) {
            this.#log(`telegram: cannot keep the update offset: ${failed.message}`);
          }
          offsetFailed = failed !== undefined;
        }
      } catch (error) {
        if (signal.aborted || error instanceof GatewayClosedError) break;
        if (error instanceof TelegramApiError && error.badToken) {
          this.#rejectToken(error);
          break;
        }
        failures += 1;
        const delay = retryDelayMs(error, failures, backoff);
        if (failures === 1 || failures % 10 === 0) {
          this.#log(`telegram: ${describe(error)}; trying again in ${delay} ms`);
        }
        await sleep(delay, undefined, { signal }).catch(() => undefined);
      }
    }
    if (offset !== undefined && offset !== confirmed) await this.#confirm(offset);
    await session.outbox.idle();
  }

  /**
   * One `getUpdates`, aborted by `signal` or a while after its own timeout, so a
   * silent connection cannot hang the loop. (Not `AbortSignal.any`: on Node 20
   * each composite stays referenced by the long-lived signal.)
   */
  async #longPoll(
    offset: number | undefined,
    timeout: number,
    signal: AbortSignal,
  ): Promise<TelegramUpdate[]> {
    const poll = new AbortController();
    const abort = () => poll.abort(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    const timer = setTimeout(
      () => poll.abort(new Error(`getUpdates: no answer within ${timeout + 15} s`)),
      (timeout + 15) * 1000,
    );
    try {
      return await this.#api.getUpdates(
        { ...(offset === undefined ? {} : { offset }), timeout, allowed_updates: ["message"] },
        poll.signal,
      );
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", abort);
    }
  }

  /** Tells Telegram the last updates were processed, so a restart does not get them again. */
  async #confirm(offset: number): Promise<void> {
    await this.#api
      .getUpdates(
        { offset, timeout: 0, limit: 1, allowed_updates: ["message"] },
        AbortSignal.timeout(2000),
      )
      .catch(() => undefined);
  }

  async #handle(session: Session, update: TelegramUpdate): Promise<void> {
    const message = update.message;
    if (!message) return;
    try {
      await this.#handleMessage(session, message);
    } catch (error) {
      if (error instanceof GatewayClosedError) throw error;
      this.#log(`telegram: update ${update.update_id} failed: ${describe(error)}`);
      void session.outbox.send(
        String(message.chat.id),
        `Could not take the message: ${describe(error)}`,
      );
    }
  }

  async #handleMessage(session: Session, message: TelegramMessage): Promise<void> {
    const { outbox } = session;
    const chatId = String(message.chat.id);
    const userId = message.from === undefined ? undefined : String(message.from.id);
    if (!this.#allow.has(chatId) && !(userId !== undefined && this.#allow.has(userId))) {
      this.#refuse(session, chatId, userId);
      return;
    }
    const channelId = `${TELEGRAM_CHANNEL_PREFIX}${chatId}`;
    const text = message.text;
    if (text === undefined) {
      void outbox.send(chatId, "Only text messages reach the agent.");
      return;
    }
    const command = parseCommand(text);
    if (command && !this.#isConversationCommand(command)) {
      const answer = await answerCommand(
        command,
        this.#botName,
        session.context.permissions,
        channelId,
      );
      if (answer !== null) void outbox.send(chatId, answer);
      return;
    }
    this.#watch(session, channelId);
    const delivery = await session.deliver(channelId, text, {
      source: "telegram",
      chatId,
      ...(userId === undefined ? {} : { userId }),
      messageId: message.message_id,
    });
    if (delivery.disposition !== "deferred") session.typing.start(chatId);
  }

  /** `/compact [focus]` and `/clear` for this bot go to the channel like messages. */
  #isConversationCommand(command: ChatCommand): boolean {
    const forUs =
      command.bot === undefined ||
      !this.#botName ||
      command.bot.toLowerCase() === this.#botName.toLowerCase();
    return forUs && parseChannelCommand(`/${command.name} ${command.args}`) !== null;
  }

  #refuse(session: Session, chatId: string, userId: string | undefined): void {
    const key = `${chatId}/${userId ?? ""}`;
    if (this.#strangers.has(key)) return;
    if (this.#strangers.size >= REMEMBERED_STRANGERS) this.#strangers.clear();
    this.#strangers.add(key);
    this.#log(
      `telegram: refused ${userId === undefined ? "a message" : `user ${userId}`} in chat ${chatId} (not on the allow-list)`,
    );
    void session.outbox.send(chatId, refusalText(userId, chatId));
  }

  #watch(session: Session, channelId: string): void {
    if (this.#watched.has(channelId) || session.signal.aborted) return;
    const chatId = channelId.slice(TELEGRAM_CHANNEL_PREFIX.length);
    const unsubscribe = session.context.subscribe(channelId, (event) => {
      const text = outboundText(event);
      if (text === null) return;
      if (event.type === "permission_resolved" && event.decision === "allow") {
        session.typing.start(chatId);
      } else {
        session.typing.stop(chatId);
      }
      void session.outbox.send(chatId, text);
    });
    this.#watched.set(channelId, unsubscribe);
  }
}

interface Session {
  deliver: Deliver;
  context: SourceContext;
  outbox: TelegramOutbox;
  typing: TypingIndicator;
  signal: AbortSignal;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
