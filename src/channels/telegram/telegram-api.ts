import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";

/** The parts of the Bot API's objects the Telegram source reads. */
export interface TelegramUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  username?: string;
}

export interface TelegramChat {
  id: number;
  type: string;
  is_forum?: boolean;
  /** A group's, supergroup's or channel's title. */
  title?: string;
}

export interface TelegramEntity {
  type: string;
  offset: number;
  length: number;
}

/** A file the Bot API describes (photo size, document, voice note, audio). */
export interface TelegramFile {
  file_id: string;
  file_size?: number;
  file_name?: string;
  mime_type?: string;
}

export interface TelegramMessage {
  message_id: number;
  from?: TelegramUser;
  chat: TelegramChat;
  date: number;
  text?: string;
  caption?: string;
  entities?: TelegramEntity[];
  caption_entities?: TelegramEntity[];
  /** The forum topic (or reply thread) a message belongs to. */
  message_thread_id?: number;
  is_topic_message?: boolean;
  reply_to_message?: TelegramMessage;
  photo?: TelegramFile[];
  document?: TelegramFile;
  voice?: TelegramFile;
  audio?: TelegramFile;
  video?: TelegramFile;
}

export interface TelegramCallbackQuery {
  id: string;
  from: TelegramUser;
  message?: TelegramMessage;
  data?: string;
}

export interface TelegramUpdate {
  update_id: number;
  message?: TelegramMessage;
  callback_query?: TelegramCallbackQuery;
}

/** What `sendMessage` and `editMessageText` take besides the text. */
export interface TelegramSendOptions {
  parseMode?: "HTML";
  /** Inline keyboard rows; `[]` removes the buttons (on an edit). */
  buttons?: Array<Array<{ text: string; callback_data: string }>>;
  threadId?: number;
  replyTo?: number;
}

export const DEFAULT_TELEGRAM_API_URL = "https://api.telegram.org";

/** A Bot API answers at most this much per call; more is a broken server, not an answer. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * A Bot API call that failed: `status` is the HTTP status (the API's
 * `error_code`), or 0 when no answer arrived (refused connection, reset,
 * timeout, unreadable body). `retryAfterSeconds` is a 429's
 * `parameters.retry_after`. Messages never contain the bot's token.
 */
export class TelegramApiError extends Error {
  override readonly name = "TelegramApiError";
  readonly method: string;
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    method: string,
    status: number,
    description: string,
    options: { retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(
      `${method}: ${status === 0 ? "no answer" : String(status)} ${description}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.method = method;
    this.status = status;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The token is wrong or revoked: 401, or 404 for a token that is not one at all. */
  get badToken(): boolean {
    return this.status === 401 || this.status === 404;
  }

  /** Worth trying again later: no answer, a rate limit, a conflict, or a server error. */
  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status === 409 || this.status >= 500;
  }
}

interface ApiAnswer {
  ok?: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

/**
 * A small Bot API client over `node:http` / `node:https` (loaded only for an
 * https URL), for the same reason the model's transport avoids `fetch`: its
 * WebAssembly parser costs ~20 MB on first use. Each call is one JSON POST
 * to `<baseUrl>/bot<token>/<method>`; it resolves to the answer's `result`
 * and rejects only with `TelegramApiError`, or with the signal's reason when
 * `signal` aborts.
 */
export class TelegramApi {
  readonly #token: string;
  readonly #baseUrl: URL;

  constructor(options: { token: string; baseUrl?: string }) {
    this.#token = options.token;
    this.#baseUrl = new URL(options.baseUrl ?? DEFAULT_TELEGRAM_API_URL);
  }

  getMe(signal?: AbortSignal): Promise<TelegramUser> {
    return this.call<TelegramUser>("getMe", {}, signal);
  }

  getUpdates(
    parameters: { offset?: number; timeout: number; limit?: number; allowed_updates: string[] },
    signal?: AbortSignal,
  ): Promise<TelegramUpdate[]> {
    return this.call<TelegramUpdate[]>("getUpdates", parameters, signal);
  }

  /** Plain text unless `options.parseMode` says HTML (escaped by the caller). */
  sendMessage(
    chatId: string,
    text: string,
    signal?: AbortSignal,
    options: TelegramSendOptions = {},
  ): Promise<TelegramMessage> {
    return this.call<TelegramMessage>(
      "sendMessage",
      {
        chat_id: chatId,
        text,
        ...sendParameters(options),
        ...(options.threadId === undefined ? {} : { message_thread_id: options.threadId }),
        ...(options.replyTo === undefined
          ? {}
          : {
              reply_parameters: { message_id: options.replyTo, allow_sending_without_reply: true },
            }),
      },
      signal,
    );
  }

  editMessageText(
    chatId: string,
    messageId: number,
    text: string,
    signal?: AbortSignal,
    options: TelegramSendOptions = {},
  ): Promise<unknown> {
    return this.call(
      "editMessageText",
      { chat_id: chatId, message_id: messageId, text, ...sendParameters(options) },
      signal,
    );
  }

  answerCallbackQuery(queryId: string, text?: string, signal?: AbortSignal): Promise<unknown> {
    return this.call(
      "answerCallbackQuery",
      { callback_query_id: queryId, ...(text === undefined ? {} : { text, show_alert: true }) },
      signal,
    );
  }

  setMyCommands(
    commands: Array<{ command: string; description: string }>,
    signal?: AbortSignal,
  ): Promise<unknown> {
    return this.call("setMyCommands", { commands }, signal);
  }

  /** A file's bytes from `<base>/file/bot<token>/<path>` (after `getFile`), at most 50 MB. */
  async download(path: string, signal?: AbortSignal): Promise<Buffer> {
    const base = this.#baseUrl.href.endsWith("/") ? this.#baseUrl.href : `${this.#baseUrl.href}/`;
    const url = new URL(`./file/bot${this.#token}/${path}`, base);
    const get =
      url.protocol === "https:"
        ? (await import("node:https")).get
        : (await import("node:http")).get;
    return new Promise((resolve, reject) => {
      const request = get(url, { signal }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > 50 * 1024 * 1024) request.destroy(new Error("file too large"));
          else chunks.push(chunk);
        });
        response.on("error", reject);
        response.on("end", () => {
          if ((response.statusCode ?? 0) >= 300) {
            reject(new TelegramApiError("getFile", response.statusCode ?? 0, "download failed"));
          } else resolve(Buffer.concat(chunks));
        });
      });
      request.on("error", (error) =>
        reject(new TelegramApiError("getFile", 0, this.redact(describe(error)), { cause: error })),
      );
    });
  }

  /**
   * `sendPhoto` or `sendDocument`: the file uploaded with the call (multipart), with a caption
   * (HTML when `options.parseMode` says so; at most 1024 characters).
   */
  async sendFile(
    method: "sendPhoto" | "sendDocument",
    chatId: string,
    file: { name: string; mediaType: string; data: Buffer },
    signal?: AbortSignal,
    options: TelegramSendOptions & { caption?: string | undefined } = {},
  ): Promise<TelegramMessage> {
    const form = new FormData();
    form.set("chat_id", chatId);
    if (options.caption !== undefined) form.set("caption", options.caption);
    if (options.parseMode !== undefined) form.set("parse_mode", options.parseMode);
    if (options.threadId !== undefined) form.set("message_thread_id", String(options.threadId));
    if (options.replyTo !== undefined) {
      const reply = { message_id: options.replyTo, allow_sending_without_reply: true };
      form.set("reply_parameters", JSON.stringify(reply));
    }
    const field = method === "sendPhoto" ? "photo" : "document";
    form.set(field, new Blob([new Uint8Array(file.data)], { type: file.mediaType }), file.name);
    // The multipart encoding of the form, as `fetch` would send it (without loading `fetch`).
    const encoded = new Request("http://multipart.invalid/", { method: "POST", body: form });
    const body = Buffer.from(await encoded.arrayBuffer());
    const type = encoded.headers.get("content-type") ?? "multipart/form-data";
    return this.#post<TelegramMessage>(method, body, type, signal);
  }

  async call<T>(
    method: string,
    parameters: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<T> {
    return this.#post<T>(method, JSON.stringify(parameters), "application/json", signal);
  }

  async #post<T>(
    method: string,
    body: string | Buffer,
    contentType: string,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    signal?.throwIfAborted();
    const base = this.#baseUrl.href.endsWith("/") ? this.#baseUrl.href : `${this.#baseUrl.href}/`;
    const url = new URL(`./bot${this.#token}/${method}`, base);
    const send =
      url.protocol === "https:" ? (await import("node:https")).request : (httpRequest as Send);
    // An abort while node:https loaded fired no listener, and one added now never fires.
    signal?.throwIfAborted();
    const { status, text } = await exchange(send, url, body, contentType, signal).catch(
      (error: unknown) => {
        if (signal?.aborted) throw signal.reason;
        throw new TelegramApiError(method, 0, this.redact(describe(error)), { cause: error });
      },
    );
    let answer: ApiAnswer;
    try {
      answer = JSON.parse(text) as ApiAnswer;
    } catch {
      throw new TelegramApiError(method, status === 200 ? 0 : status, "answer is not JSON");
    }
    if (answer.ok === true && status < 300) return answer.result as T;
    const retryAfter = answer.parameters?.retry_after;
    throw new TelegramApiError(
      method,
      answer.error_code ?? status,
      this.redact(answer.description ?? "failed"),
      typeof retryAfter === "number" ? { retryAfterSeconds: retryAfter } : {},
    );
  }

  /** Removes the token, and its secret half after the colon, from text meant for logs. */
  redact(text: string): string {
    let redacted = text;
    const secret = this.#token.slice(this.#token.indexOf(":") + 1);
    for (const part of [this.#token, secret]) {
      if (part.length >= 6) redacted = redacted.replaceAll(part, "<token>");
    }
    return redacted;
  }
}

function sendParameters(options: TelegramSendOptions): Record<string, unknown> {
  return {
    ...(options.parseMode === undefined ? {} : { parse_mode: options.parseMode }),
    ...(options.buttons === undefined
      ? {}
      : { reply_markup: { inline_keyboard: options.buttons } }),
  };
}

type Send = (url: URL, options: RequestOptions) => ReturnType<typeof httpRequest>;

function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code} ${message}` : message;
}

function exchange(
  send: Send,
  url: URL,
  body: string | Buffer,
  contentType: string,
  signal: AbortSignal | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = send(url, {
      method: "POST",
      headers: {
        "content-type": contentType,
        "content-length": Buffer.byteLength(body),
      },
    });
    const onAbort = () => request.destroy(signal?.reason as Error);
    signal?.addEventListener("abort", onAbort, { once: true });
    const settle = () => signal?.removeEventListener("abort", onAbort);
    request.on("error", (error) => {
      settle();
      reject(error);
    });
    request.on("response", (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) request.destroy(new Error("answer too large"));
        else chunks.push(chunk);
      });
      response.on("error", (error) => {
        settle();
        reject(error);
      });
      response.on("close", () => {
        settle();
        if (!response.complete) reject(new Error("the connection closed before the answer ended"));
      });
      response.on("end", () => {
        settle();
        resolve({
          status: response.statusCode ?? 0,
          text: Buffer.concat(chunks).toString("utf8"),
        });
      });
    });
    request.end(body);
  });
}
