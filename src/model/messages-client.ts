import type { IncomingMessage } from "node:http";
import { ApiConnectionError, ApiError, jsonOrText } from "./api-error.js";
import type { HeaderReader } from "./retry-policy.js";
import { messageStreamEvents } from "./server-sent-events.js";

/**
 * A small client for one endpoint, `POST /v1/messages` with `stream: true`, over Node's own
 * http/https modules. It sends what the Anthropic SDK (1.14) sends for that call, but loading it
 * costs next to nothing: no SDK, and no fetch (whose undici and WebAssembly parser cost a `rudder
 * run` tens of milliseconds and tens of megabytes before its first request).
 */

export const DEFAULT_BASE_URL = "https://api.anthropic.com";
/** The API version the Anthropic SDK 1.14 sends. */
export const API_VERSION = "2026-10-21";
const DEFAULT_TIMEOUT_MS = 600_000;

export interface MessagesClientOptions {
  /** At most one of the two; with neither, `ANTHROPIC_API_KEY`, then `ANTHROPIC_AUTH_TOKEN`. */
  apiKey?: string;
  authToken?: string;
  /** Default `ANTHROPIC_BASE_URL`, else the Anthropic API. */
  baseURL?: string;
  /** Until the response starts; default 10 minutes. */
  timeoutMs?: number;
  /** Sends through this fetch instead of node:http. */
  fetch?: typeof globalThis.fetch;
  /** Where the variables above (and `ANTHROPIC_CUSTOM_HEADERS`) are read. */
  env?: Record<string, string | undefined>;
}

export interface MessagesClient {
  /**
   * Posts a streaming Messages request and resolves, once the response has started, to its
   * events. An error status rejects with an `ApiError`; a failed connection with the
   * transport's error (or an `ApiConnectionError` for a timeout). Aborting `signal` ends both.
   */
  stream(body: Record<string, unknown>, signal: AbortSignal): Promise<AsyncIterable<unknown>>;
}

interface StartedResponse {
  status: number;
  header: HeaderReader;
  text: AsyncIterable<string>;
}

function envValue(env: Record<string, string | undefined>, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** `ANTHROPIC_CUSTOM_HEADERS`: one `Name: value` a line, as Claude Code and the SDK read it. */
function customHeaders(env: Record<string, string | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of (env.ANTHROPIC_CUSTOM_HEADERS ?? "").split("\n")) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    if (colon > 0 && name !== "") headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

export function messagesUrl(baseURL: string): URL {
  return new URL(`${baseURL.endsWith("/") ? baseURL.slice(0, -1) : baseURL}/v1/messages`);
}

async function readAll(text: AsyncIterable<string>): Promise<string> {
  let all = "";
  for await (const chunk of text) all += chunk;
  return all;
}

function postWithNode(
  url: URL,
  headers: Record<string, string>,
  payload: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<StartedResponse> {
  const transport = url.protocol === "https:" ? import("node:https") : import("node:http");
  return transport.then(
    ({ request }) =>
      new Promise<StartedResponse>((resolve, reject) => {
        const outgoing = request(url, {
          method: "POST",
          headers: { ...headers, "content-length": String(Buffer.byteLength(payload)) },
          signal,
        });
        const timer = setTimeout(
          () => outgoing.destroy(new ApiConnectionError("Request timed out.")),
          timeoutMs,
        );
        outgoing.on("error", (error) => {
          clearTimeout(timer);
          reject(error);
        });
        outgoing.on("response", (response: IncomingMessage) => {
          clearTimeout(timer);
          response.setEncoding("utf8");
          resolve({
            status: response.statusCode ?? 0,
            header: (name) => {
              const value = response.headers[name.toLowerCase()];
              return Array.isArray(value) ? value.join(", ") : value;
            },
            text: response,
          });
        });
        outgoing.end(payload);
      }),
  );
}

async function* decoded(body: AsyncIterable<Uint8Array> | null): AsyncGenerator<string> {
  if (body === null) return;
  const decoder = new TextDecoder();
  for await (const bytes of body) yield decoder.decode(bytes, { stream: true });
  const rest = decoder.decode();
  if (rest !== "") yield rest;
}

async function postWithFetch(
  fetch: typeof globalThis.fetch,
  url: URL,
  headers: Record<string, string>,
  payload: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<StartedResponse> {
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new ApiConnectionError("Request timed out.")),
    timeoutMs,
  );
  try {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: payload,
      signal: AbortSignal.any([signal, timeout.signal]),
    });
    const body = response.body as AsyncIterable<Uint8Array> | null;
    return {
      status: response.status,
      header: (name) => response.headers.get(name),
      text: decoded(body),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Throws when the credentials are missing or ambiguous, like the SDK's constructor. */
export function createMessagesClient(options: MessagesClientOptions): MessagesClient {
  const env = options.env ?? process.env;
  if (options.apiKey !== undefined && options.authToken !== undefined) {
    throw new TypeError("Pass at most one of `apiKey`, `authToken`.");
  }
  const credential =
    options.apiKey ??
    options.authToken ??
    envValue(env, "ANTHROPIC_API_KEY") ??
    envValue(env, "ANTHROPIC_AUTH_TOKEN");
  if (credential === undefined) {
    throw new Error(
      "Could not resolve authentication method. Expected apiKey or authToken, or ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN to be set.",
    );
  }
  const url = messagesUrl(
    options.baseURL ?? envValue(env, "ANTHROPIC_BASE_URL") ?? DEFAULT_BASE_URL,
  );
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`The base URL must be http or https, not ${url.protocol}`);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // The SDK 1.14 sends an API key as a bearer token too.
  const headers: Record<string, string> = {
    accept: "application/json",
    "content-type": "application/json",
    "user-agent": "rudder",
    "anthropic-version": API_VERSION,
    authorization: `Bearer ${credential}`,
    ...customHeaders(env),
  };

  return {
    async stream(body, signal) {
      const payload = JSON.stringify(body);
      const response =
        options.fetch === undefined
          ? await postWithNode(url, headers, payload, signal, timeoutMs)
          : await postWithFetch(options.fetch, url, headers, payload, signal, timeoutMs);
      if (response.status < 200 || response.status > 299) {
        const text = await readAll(response.text);
        throw new ApiError(response.status, jsonOrText(text), response.header);
      }
      return messageStreamEvents(response.text, response.header);
    },
  };
}
