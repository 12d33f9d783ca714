import { setTimeout as sleep } from "node:timers/promises";
import { GatewayClosedError } from "../../gateway/gateway-closed-error.js";
import { type Backoff, backoffDelayMs, DEFAULT_BACKOFF } from "../kit/backoff.js";
import type {
  ChatPlatform,
  OutgoingChat,
  OutgoingFile,
  PlatformFailure,
  PlatformHandlers,
} from "../kit/chat-platform.js";
import { TelegramApi, TelegramApiError, type TelegramUpdate } from "./telegram-api.js";
import { escapeHtml, markdownToTelegramHtml } from "./telegram-html.js";
import { OffsetFile } from "./telegram-offset.js";
import { addressOf, incomingOf, pressOf, type TelegramBot } from "./telegram-updates.js";

/** What one message may carry, in UTF-16 code units after its markup (Telegram counts so). */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

const ALLOWED_UPDATES = ["message", "callback_query"];

export interface TelegramPlatformOptions {
  token: string;
  apiUrl?: string | undefined;
  /** `getUpdates`' long-poll timeout; default 30 seconds. */
  pollTimeoutSeconds?: number | undefined;
  /** Where the next update offset is kept per bot. */
  stateDir?: string | undefined;
  backoff?: Backoff | undefined;
}

/** How long to wait after the `failures`-th failure in a row; a 429's `retry_after` wins. */
export function retryDelayMs(error: unknown, failures: number, backoff: Backoff): number {
  const retryAfter =
    error instanceof TelegramApiError && error.retryAfterSeconds !== undefined
      ? error.retryAfterSeconds * 1000
      : undefined;
  return backoffDelayMs(failures, backoff, retryAfter);
}

/**
 * Telegram's Bot API as a chat kit platform: long polling `getUpdates` for messages and
 * button presses, an update counted processed once its handler resolved (its offset written
 * to `stateDir` at once and confirmed to Telegram with the next poll, or a last one at stop);
 * HTML for markdown (plain when nothing in it is markup); edits about once a second per chat,
 * every three seconds in groups (Telegram's limits). Failures back off; a rejected token ends
 * `receive` after `handlers.badToken`.
 */
export class TelegramPlatform implements ChatPlatform {
  readonly name = "telegram";
  /** Two `getUpdates` pollers of one bot conflict (Telegram answers one of them 409). */
  readonly exclusive = true;
  readonly limits = {
    messageLength: TELEGRAM_MESSAGE_LIMIT,
    editIntervalMs: (group: boolean) => (group ? 3000 : 1000),
  };
  readonly api: TelegramApi;
  readonly #options: TelegramPlatformOptions;
  #bot: TelegramBot | undefined;

  constructor(options: TelegramPlatformOptions) {
    this.#options = options;
    this.api = new TelegramApi({
      token: options.token,
      ...(options.apiUrl ? { baseUrl: options.apiUrl } : {}),
    });
  }

  get botName(): string | undefined {
    return this.#bot?.username;
  }

  async receive(handlers: PlatformHandlers, signal: AbortSignal): Promise<void> {
    const backoff = this.#options.backoff ?? DEFAULT_BACKOFF;
    const timeout = this.#options.pollTimeoutSeconds ?? 30;
    let offset: number | undefined;
    let confirmed: number | undefined;
    let offsetFile: OffsetFile | undefined;
    let offsetFailed = false;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (this.#bot === undefined) {
          const me = await this.api.getMe(signal);
          this.#bot = { id: me.id, username: me.username ?? "" };
          handlers.log(`telegram: polling as @${this.#bot.username}`);
          if (this.#options.stateDir !== undefined) {
            offsetFile = new OffsetFile(this.#options.stateDir, me.id);
            offset = offsetFile.read();
          }
        }
        const requested = offset;
        const updates = await this.#longPoll(offset, timeout, signal);
        // Only an answer proves Telegram saw the offset; an aborted poll may never have left.
        confirmed = requested;
        if (failures > 0) handlers.log("telegram: the Bot API answers again");
        failures = 0;
        for (const update of updates) {
          if (offset !== undefined && update.update_id < offset) continue;
          await this.#handle(handlers, update);
          offset = update.update_id + 1;
          const failed = offsetFile?.write(offset);
          if (failed && !offsetFailed) {
            handlers.log(`telegram: cannot keep the update offset: ${failed.message}`);
          }
          offsetFailed = failed !== undefined;
        }
      } catch (error) {
        if (signal.aborted || error instanceof GatewayClosedError) break;
        if (error instanceof TelegramApiError && error.badToken) {
          handlers.badToken(error.status);
          break;
        }
        failures += 1;
        const delay = retryDelayMs(error, failures, backoff);
        if (failures === 1 || failures % 10 === 0) {
          handlers.log(`telegram: ${describe(error)}; trying again in ${delay} ms`);
        }
        await sleep(delay, undefined, { signal }).catch(() => undefined);
      }
    }
    if (offset !== undefined && offset !== confirmed) await this.#confirm(offset);
  }

  async #handle(handlers: PlatformHandlers, update: TelegramUpdate): Promise<void> {
    if (update.message) {
      const fetch = (fileId: string, signal: AbortSignal) => this.#download(fileId, signal);
      await handlers.message(incomingOf(update.message, this.#bot, fetch));
    } else if (update.callback_query) {
      const press = pressOf(update.callback_query);
      if (press) await handlers.button(press);
      else await this.answerButton(update.callback_query.id, undefined);
    }
  }

  /** A file's bytes: `getFile`, then `<base>/file/bot<token>/<path>` (for media handling). */
  async #download(fileId: string, signal: AbortSignal): Promise<Buffer> {
    const file = await this.api.call<{ file_path?: string }>(
      "getFile",
      { file_id: fileId },
      signal,
    );
    if (!file.file_path) throw new TelegramApiError("getFile", 400, "no file_path");
    return this.api.download(file.file_path, signal);
  }

  /**
   * One `getUpdates`, aborted by `signal` or a while after its own timeout, so a silent
   * connection cannot hang the loop. (Not `AbortSignal.any`: on Node 20 each composite stays
   * referenced by the long-lived signal.)
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
      return await this.api.getUpdates(
        { ...(offset === undefined ? {} : { offset }), timeout, allowed_updates: ALLOWED_UPDATES },
        poll.signal,
      );
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", abort);
    }
  }

  /** Tells Telegram the last updates were processed, so a restart does not get them again. */
  async #confirm(offset: number): Promise<void> {
    await this.api
      .getUpdates(
        { offset, timeout: 0, limit: 1, allowed_updates: ALLOWED_UPDATES },
        AbortSignal.timeout(2000),
      )
      .catch(() => undefined);
  }

  #render(message: OutgoingChat) {
    const buttons = message.buttons?.map((row) =>
      row.map((button) => ({ text: button.label, callback_data: button.data })),
    );
    const base = {
      ...(buttons === undefined ? {} : { buttons }),
      ...(message.replyTo === undefined ? {} : { replyTo: Number(message.replyTo) }),
    };
    if (message.format === "markdown") {
      const html = markdownToTelegramHtml(message.text);
      // Plain when nothing in it is markup: no parse mode, nothing to be refused.
      if (html !== escapeHtml(message.text) || /[<>&]/.test(message.text)) {
        return { text: html, options: { ...base, parseMode: "HTML" as const } };
      }
    }
    return { text: message.text, options: base };
  }

  async send(channelId: string, message: OutgoingChat, signal: AbortSignal): Promise<string> {
    const address = addressOf(channelId);
    if (address === null) throw new TelegramApiError("sendMessage", 400, "not a Telegram channel");
    const { text, options } = this.#render(message);
    const sent = await this.api.sendMessage(address.chatId, text, signal, {
      ...options,
      ...(address.topic === undefined ? {} : { threadId: address.topic }),
    });
    return String(sent.message_id);
  }

  /**
   * An image within Telegram's photo limits (JPEG or PNG, 10 MB, a PNG's sides at most 10,000
   * together and 20 to 1) as `sendPhoto`, shown inline; anything else, and a photo Telegram
   * refuses, as `sendDocument`. The caption is HTML as messages are, plain when too long for a
   * caption (1024) or refused as markup.
   */
  async sendFile(channelId: string, file: OutgoingFile, signal: AbortSignal): Promise<string> {
    const address = addressOf(channelId);
    if (address === null) throw new TelegramApiError("sendDocument", 400, "not a Telegram channel");
    const caption = captionOf(file.caption);
    const send = (method: "sendPhoto" | "sendDocument", plain = false) =>
      this.api.sendFile(method, address.chatId, file, signal, {
        ...(plain ? { caption: caption.plain } : caption.rendered),
        ...(address.topic === undefined ? {} : { threadId: address.topic }),
        ...(file.replyTo === undefined ? {} : { replyTo: Number(file.replyTo) }),
      });
    const withPlainCaption = (method: "sendPhoto" | "sendDocument") =>
      send(method).catch((error: unknown) => {
        if (this.failure(error).kind !== "markup") throw error;
        return send(method, true);
      });
    if (!isTelegramPhoto(file)) return String((await withPlainCaption("sendDocument")).message_id);
    try {
      return String((await withPlainCaption("sendPhoto")).message_id);
    } catch (error) {
      if (!(error instanceof TelegramApiError) || error.status !== 400) throw error;
      return String((await withPlainCaption("sendDocument")).message_id);
    }
  }

  async edit(
    channelId: string,
    messageId: string,
    message: OutgoingChat,
    signal: AbortSignal,
  ): Promise<void> {
    const address = addressOf(channelId);
    if (address === null) throw new TelegramApiError("editMessageText", 400, "not Telegram");
    const { text, options } = this.#render(message);
    const { replyTo: _replyTo, ...editOptions } = options as typeof options & { replyTo?: number };
    await this.api.editMessageText(address.chatId, Number(messageId), text, signal, editOptions);
  }

  async answerButton(pressId: string, text: string | undefined): Promise<void> {
    await this.api.answerCallbackQuery(pressId, text, AbortSignal.timeout(10_000));
  }

  async typing(channelId: string): Promise<void> {
    const address = addressOf(channelId);
    if (address === null) return;
    await this.api.call(
      "sendChatAction",
      {
        chat_id: address.chatId,
        action: "typing",
        ...(address.topic === undefined ? {} : { message_thread_id: address.topic }),
      },
      AbortSignal.timeout(10_000),
    );
  }

  async setCommands(commands: Array<{ command: string; description: string }>): Promise<void> {
    await this.api.setMyCommands(commands, AbortSignal.timeout(10_000));
  }

  failure(error: unknown): PlatformFailure {
    if (!(error instanceof TelegramApiError)) return { kind: "transient" };
    if (error.badToken) return { kind: "bad_token" };
    if (error.status === 400 && /message is not modified/i.test(error.message)) {
      return { kind: "unchanged" };
    }
    if (error.status === 400 && /can't parse entities|unsupported start tag/i.test(error.message)) {
      return { kind: "markup" };
    }
    if (error.transient) {
      return error.retryAfterSeconds === undefined
        ? { kind: "transient" }
        : { kind: "transient", retryAfterMs: error.retryAfterSeconds * 1000 };
    }
    return { kind: "refused" };
  }

  redact(text: string): string {
    return this.api.redact(text);
  }
}

/** Telegram's longest caption, in characters after its markup. */
const CAPTION_LIMIT = 1024;

function captionOf(markdown: string | undefined): {
  rendered: { caption?: string; parseMode?: "HTML" };
  plain: string | undefined;
} {
  if (markdown === undefined || markdown.trim() === "") return { rendered: {}, plain: undefined };
  const plain =
    markdown.length <= CAPTION_LIMIT ? markdown : `${markdown.slice(0, CAPTION_LIMIT - 3)}...`;
  const html = markdownToTelegramHtml(markdown);
  if (html.length > CAPTION_LIMIT || html === escapeHtml(markdown)) {
    return { rendered: { caption: plain }, plain };
  }
  return { rendered: { caption: html, parseMode: "HTML" }, plain };
}

/** Whether Telegram takes the file as a photo: JPEG or PNG, 10 MB, a PNG's sides within limits. */
function isTelegramPhoto(file: OutgoingFile): boolean {
  if (file.data.length > 10 * 1024 * 1024) return false;
  if (file.mediaType === "image/jpeg") return true;
  if (file.mediaType !== "image/png" || file.data.length < 24) return false;
  const width = file.data.readUInt32BE(16);
  const height = file.data.readUInt32BE(20);
  const [long, short] = width > height ? [width, height] : [height, width];
  return width + height <= 10_000 && short > 0 && long / short <= 20;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
