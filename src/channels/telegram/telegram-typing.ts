import type { TelegramApi } from "./telegram-api.js";

/** Telegram shows "typing..." for about five seconds per `sendChatAction`. */
const REPEAT_MS = 4500;
/** A turn that runs longer stops showing it; the reply still comes. */
const MAX_MS = 10 * 60_000;

/**
 * "typing..." in a chat while its agent works: from the delivery of a message
 * until the chat is answered (`stop`). Best effort: a failed call is ignored,
 * as the indicator is a courtesy, not a message.
 */
export class TypingIndicator {
  readonly #api: TelegramApi;
  readonly #signal: AbortSignal;
  readonly #chats = new Map<string, { timer: NodeJS.Timeout; since: number }>();

  constructor(api: TelegramApi, signal: AbortSignal) {
    this.#api = api;
    this.#signal = signal;
    signal.addEventListener("abort", () => this.stopAll(), { once: true });
  }

  start(chatId: string): void {
    if (this.#signal.aborted) return;
    const running = this.#chats.get(chatId);
    if (running) {
      running.since = Date.now();
      return;
    }
    const entry = { timer: setInterval(() => this.#tick(chatId), REPEAT_MS), since: Date.now() };
    entry.timer.unref();
    this.#chats.set(chatId, entry);
    this.#send(chatId);
  }

  stop(chatId: string): void {
    const running = this.#chats.get(chatId);
    if (!running) return;
    clearInterval(running.timer);
    this.#chats.delete(chatId);
  }

  stopAll(): void {
    for (const chatId of [...this.#chats.keys()]) this.stop(chatId);
  }

  #tick(chatId: string): void {
    const running = this.#chats.get(chatId);
    if (running && Date.now() - running.since > MAX_MS) this.stop(chatId);
    else this.#send(chatId);
  }

  #send(chatId: string): void {
    this.#api
      .call("sendChatAction", { chat_id: chatId, action: "typing" }, this.#signal)
      .catch(() => undefined);
  }
}
