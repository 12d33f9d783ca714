import { setTimeout as sleep } from "node:timers/promises";
import { type TelegramApi, TelegramApiError } from "./telegram-api.js";
import { splitMessage } from "./telegram-text.js";

/** Capped exponential backoff: `initialMs` doubled per failure in a row, at most `maxMs`. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 1000, maxMs: 60_000 };

/** How long to wait after the `failures`-th failure in a row; a 429's `retry_after` wins. */
export function retryDelayMs(error: unknown, failures: number, backoff: Backoff): number {
  if (error instanceof TelegramApiError && error.retryAfterSeconds !== undefined) {
    return Math.max(0, error.retryAfterSeconds * 1000);
  }
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** exponent);
}

/**
 * A part that keeps failing is dropped after this many tries (with the default backoff, about
 * six minutes of a Bot API that cannot be reached); the reply stays in the store.
 */
const MAX_ATTEMPTS = 12;

/**
 * One `sendMessage` that has had no answer for this long is given up and tried again: a stuck
 * connection would otherwise hold every later reply to that chat. (A message the API did take
 * but could not confirm is then sent twice; better than never.)
 */
export const DEFAULT_SEND_TIMEOUT_MS = 30_000;

export interface TelegramOutboxOptions {
  api: TelegramApi;
  signal: AbortSignal;
  backoff: Backoff;
  /** Default `DEFAULT_SEND_TIMEOUT_MS`. */
  sendTimeoutMs?: number;
  logger: (line: string) => void;
  /** The Bot API rejected the token while sending. */
  onBadToken: (error: TelegramApiError) => void;
}

/**
 * Messages to Telegram chats, in order per chat: each text is split to fit
 * a message, and each part is sent with retries (network errors, 5xx and 429
 * back off, honouring `retry_after`). A part the API refuses for good (a chat
 * that blocked the bot, say) is logged and dropped. Never rejects.
 */
export class TelegramOutbox {
  readonly #options: TelegramOutboxOptions;
  readonly #queues = new Map<string, Promise<void>>();

  constructor(options: TelegramOutboxOptions) {
    this.#options = options;
  }

  /** Resolves when `text` is sent, dropped, or the outbox stopped. */
  send(chatId: string, text: string): Promise<void> {
    const previous = this.#queues.get(chatId) ?? Promise.resolve();
    const queued = previous.then(() => this.#sendParts(chatId, text));
    this.#queues.set(chatId, queued);
    void queued.then(() => {
      if (this.#queues.get(chatId) === queued) this.#queues.delete(chatId);
    });
    return queued;
  }

  /** Resolves when everything queued so far is sent or dropped. */
  async idle(): Promise<void> {
    await Promise.all(this.#queues.values());
  }

  async #sendParts(chatId: string, text: string): Promise<void> {
    const parts = splitMessage(text.trim() === "" ? "(no text)" : text);
    for (const part of parts) {
      if (!(await this.#sendPart(chatId, part))) return;
    }
  }

  async #sendPart(chatId: string, text: string): Promise<boolean> {
    const { signal, backoff, logger } = this.#options;
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        await this.#sendOnce(chatId, text);
        return true;
      } catch (error) {
        if (signal.aborted) return false;
        if (error instanceof TelegramApiError && error.badToken) {
          this.#options.onBadToken(error);
          return false;
        }
        const transient = !(error instanceof TelegramApiError) || error.transient;
        if (!transient || attempt >= MAX_ATTEMPTS) {
          logger(`telegram: could not send to chat ${chatId}, dropped: ${describe(error)}`);
          return false;
        }
        await sleep(retryDelayMs(error, attempt, backoff), undefined, { signal }).catch(
          () => undefined,
        );
      }
    }
    return false;
  }

  /** One try, abandoned after the send timeout (an Error "no answer within ..."). */
  async #sendOnce(chatId: string, text: string): Promise<void> {
    const { api, signal } = this.#options;
    const timeoutMs = this.#options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
    // Its own controller per try, rather than AbortSignal.any, whose composites pile up on
    // Node 20 while the long-lived outer signal lives.
    const attempt = new AbortController();
    const timer = setTimeout(
      () => attempt.abort(new Error(`no answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    const onStop = () => attempt.abort(signal.reason);
    signal.addEventListener("abort", onStop, { once: true });
    try {
      await api.sendMessage(chatId, text, attempt.signal);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onStop);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
