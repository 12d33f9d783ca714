/**
 * The one call rudder makes of the Anthropic API: a streamed `POST /v1/messages`, answered with
 * the stream's events as parsed JSON (`message_start`, `content_block_delta` ...; pings
 * skipped). Written here in place of the Anthropic SDK, whose client a CLI started for one
 * request paid about 300 KB of code to load; this is the part of it rudder used: credentials
 * (`x-api-key` or a bearer token, from the options or `ANTHROPIC_API_KEY` /
 * `ANTHROPIC_AUTH_TOKEN`), the base URL (`ANTHROPIC_BASE_URL`), `ANTHROPIC_CUSTOM_HEADERS`,
 * a timeout until the answer starts, and errors as the SDK shaped them (`ApiError`). Retries
 * are the caller's (`anthropic-model.ts`).
 */
import { ApiConnectionError, ApiError } from "./api-error.js";
import { abortError, type HttpAnswer, sendHttp } from "./http-transport.js";
import { ServerSentEventDecoder } from "./server-sent-events.js";

export const ANTHROPIC_VERSION = "2023-06-01";
const DEFAULT_BASE_URL = "https://api.anthropic.com";
/** The SDK's: ten minutes for the answer to start. */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** An error answer longer than this is cut: it is shown to a person in one line. */
const ERROR_BODY_LIMIT = 64 * 1024;

export interface MessagesClientOptions {
  /** At most one of `apiKey` and `authToken`; with neither, the environment's is used. */
  apiKey?: string;
  authToken?: string;
  baseURL?: string;
  timeoutMs?: number;
  /** Sends the request instead of `node:http` (a test's or a proxy's fetch). */
  fetch?: typeof globalThis.fetch;
  /** Where `ANTHROPIC_*` variables are read; default `process.env`. */
  env?: Record<string, string | undefined>;
}

export interface MessagesClient {
  /**
   * Sends `body` (with `stream: true`) and resolves once the answer starts: to its events, or
   * rejects with an `ApiError` for an error status. An `error` event inside the stream throws
   * an `ApiError` from the iteration; a stream cut short throws its socket's error.
   */
  stream(body: Record<string, unknown>, signal: AbortSignal): Promise<AsyncIterable<unknown>>;
}

function present(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** `ANTHROPIC_CUSTOM_HEADERS`: `Name: value` lines, as the SDK and Claude Code read them. */
function customHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of (text ?? "").split("\n")) {
    const colon = line.indexOf(":");
    if (colon >= 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function credentialHeader(
  options: MessagesClientOptions,
  env: MessagesClientOptions["env"],
): Record<string, string> {
  if (options.apiKey !== undefined && options.authToken !== undefined) {
    throw new TypeError("Pass at most one of `apiKey`, `authToken`.");
  }
  if (options.apiKey !== undefined) return { "x-api-key": options.apiKey };
  if (options.authToken !== undefined) return { authorization: `Bearer ${options.authToken}` };
  const apiKey = present(env?.ANTHROPIC_API_KEY);
  if (apiKey !== undefined) return { "x-api-key": apiKey };
  const authToken = present(env?.ANTHROPIC_AUTH_TOKEN);
  if (authToken !== undefined) return { authorization: `Bearer ${authToken}` };
  throw new Error(
    "Could not resolve authentication method. Expected either apiKey or authToken to be set " +
      "(ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN).",
  );
}

function messagesUrl(baseURL: string): URL {
  return new URL(`${baseURL}${baseURL.endsWith("/") ? "" : "/"}v1/messages`);
}

/** The same answer from a fetch: its body decoded as UTF-8 text. */
async function sendWithFetch(
  fetch: typeof globalThis.fetch,
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<HttpAnswer> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  let response: Response;
  try {
    const either = AbortSignal.any([signal, timeout.signal]);
    response = await fetch(url, { method: "POST", headers, body, signal: either });
  } catch (error) {
    if (timeout.signal.aborted && !signal.aborted) {
      throw new ApiConnectionError("Request timed out.");
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const reader = response.body;
  async function* text(): AsyncGenerator<string> {
    if (reader === null) return;
    const decoder = new TextDecoder();
    for await (const bytes of reader as unknown as AsyncIterable<Uint8Array>) {
      yield decoder.decode(bytes, { stream: true });
    }
    yield decoder.decode();
  }
  return {
    status: response.status,
    header: (name) => response.headers.get(name),
    body: text(),
    cancel: () => void reader?.cancel().catch(() => {}),
  };
}

async function errorText(answer: HttpAnswer): Promise<string> {
  let text = "";
  try {
    for await (const chunk of answer.body) {
      text += chunk;
      if (text.length > ERROR_BODY_LIMIT) break;
    }
  } finally {
    answer.cancel();
  }
  return text.slice(0, ERROR_BODY_LIMIT);
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The stream's events as parsed JSON; the connection is closed if the reader stops early. */
async function* streamEvents(
  answer: HttpAnswer,
  signal: AbortSignal,
): AsyncGenerator<unknown, void, undefined> {
  const decoder = new ServerSentEventDecoder();
  let finished = false;
  const parse = function* (events: ReturnType<ServerSentEventDecoder["push"]>) {
    for (const { event, data } of events) {
      if (event === undefined || event === "ping") continue;
      if (event === "error") {
        throw new ApiError(undefined, parsedOrText(data) ?? data, answer.header, data);
      }
      yield JSON.parse(data) as unknown;
    }
  };
  try {
    for await (const chunk of answer.body) yield* parse(decoder.push(chunk));
    if (signal.aborted) throw abortError(signal);
    yield* parse(decoder.end());
    finished = true;
  } finally {
    if (!finished) answer.cancel();
  }
}

export function createMessagesClient(options: MessagesClientOptions): MessagesClient {
  const env = options.env ?? process.env;
  const url = messagesUrl(options.baseURL ?? present(env.ANTHROPIC_BASE_URL) ?? DEFAULT_BASE_URL);
  // In the SDK's order: a custom header may replace any default but the body's type.
  const headers: Record<string, string> = {
    accept: "application/json",
    "user-agent": "rudder",
    "anthropic-version": ANTHROPIC_VERSION,
    ...credentialHeader(options, env),
    ...customHeaders(env.ANTHROPIC_CUSTOM_HEADERS),
    "content-type": "application/json",
  };
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    async stream(body, signal) {
      const text = JSON.stringify({ ...body, stream: true });
      const answer =
        options.fetch === undefined
          ? await sendHttp({ url, headers, body: text, signal, timeoutMs })
          : await sendWithFetch(options.fetch, url, headers, text, signal, timeoutMs);
      if (answer.status < 200 || answer.status > 299) {
        const errorBody = await errorText(answer);
        throw new ApiError(answer.status, parsedOrText(errorBody), answer.header, errorBody);
      }
      return streamEvents(answer, signal);
    },
  };
}
