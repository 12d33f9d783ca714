import { createMessagesClient, type MessagesClient } from "./messages-client.js";
import { abortedFailure, classifyFailure, type ModelFailure } from "./model-failure.js";
import { buildRequestBody } from "./request-body.js";
import {
  DEFAULT_MAX_RETRIES,
  DEFAULT_MAX_RETRY_DELAY_MS,
  parseMaxRetries,
  retryDelayMs,
  waitUnlessAborted,
} from "./retry-policy.js";
import { readMessageStream } from "./stream-reader.js";
import type { Model, ModelOutcome, ModelRequest, ModelResponse } from "./types.js";

export interface AnthropicModelOptions {
  /** Model id sent to the API, e.g. `claude-sonnet-5-5`; also the model's `name`. */
  model: string;
  /**
   * Give at most one of `apiKey` and `authToken`; with neither, `ANTHROPIC_API_KEY` or else
   * `ANTHROPIC_AUTH_TOKEN` is used, and with none of them each call fails as
   * `authentication_failed`.
   */
  apiKey?: string;
  authToken?: string;
  baseURL?: string;
  /** Retries after the first attempt; default `RUDDER_MAX_RETRIES` or 4. */
  maxRetries?: number;
  /** Default `max_tokens` when the request names none. */
  maxTokens?: number;
  /** First backoff step in milliseconds (doubles per retry); default 500. */
  retryBaseDelayMs?: number;
  /** Longest single wait; a server asking for more is reported instead. Default 60 s. */
  maxRetryDelayMs?: number;
  /** Per-attempt timeout until the response starts; default 10 minutes, as the SDK's. */
  timeoutMs?: number;
  /**
   * An attempt that receives nothing for this long (no answer, or a stream gone quiet) is a
   * stall: dropped and tried again at once, one time; a second stall fails the call with a
   * plain message. Default `DEFAULT_STREAM_IDLE_TIMEOUT_MS` (`RUDDER_STREAM_IDLE_TIMEOUT_MS`).
   */
  streamIdleTimeoutMs?: number;
  /** Sends the requests instead of `node:http` (which starts faster than the global fetch). */
  fetch?: typeof globalThis.fetch;
}

/** A minute of silence: the API sends pings every few seconds while a reply is being made. */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 60_000;
/** Stalls tried again before the call fails; a stalled attempt is not waited for twice. */
const STALL_RETRIES = 1;

/** What a call that stalled ends with: plain words, the engine and the setting named. */
export function stallMessage(idleMs: number, tries: number): string {
  const seconds = Math.round(idleMs / 100) / 10;
  const times = tries === 1 ? "" : ` on each of ${tries} tries`;
  return (
    `API Error: the Messages API sent nothing for ${seconds} s${times}; rudder stopped ` +
    "waiting for the model (RUDDER_STREAM_IDLE_TIMEOUT_MS sets how long it waits)"
  );
}

/** Yields `stream`'s items, calling `onIdle` when `idleMs` pass without one. */
async function* watchIdle<T>(
  stream: AsyncIterable<T>,
  idleMs: number,
  onIdle: () => void,
): AsyncGenerator<T> {
  let timer = setTimeout(onIdle, idleMs);
  try {
    for await (const item of stream) {
      clearTimeout(timer);
      timer = setTimeout(onIdle, idleMs);
      yield item;
    }
  } finally {
    clearTimeout(timer);
  }
}

function defaultMaxTokens(model: string): number {
  return /claude-3/.test(model) ? 8192 : 32_000;
}

function createClient(options: AnthropicModelOptions): MessagesClient {
  return createMessagesClient({
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    ...(options.authToken === undefined ? {} : { authToken: options.authToken }),
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
}

/**
 * A model over the Anthropic Messages API, streaming. `complete` never rejects.
 * 429, 529, 5xx and connection failures are retried up to `maxRetries` times,
 * honouring `retry-after`; text already streamed by a failed attempt is not
 * taken back, so a retried reply may repeat its opening in `onTextDelta`.
 */
export function createAnthropicModel(options: AnthropicModelOptions): Model {
  const maxRetries =
    options.maxRetries ?? parseMaxRetries(process.env.RUDDER_MAX_RETRIES) ?? DEFAULT_MAX_RETRIES;
  const timing = {
    ...(options.retryBaseDelayMs === undefined ? {} : { baseDelayMs: options.retryBaseDelayMs }),
    maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS,
  };
  let client: MessagesClient | undefined;
  let clientFailure: ModelFailure | undefined;
  try {
    client = createClient(options);
  } catch (error) {
    clientFailure = {
      error: { subtype: "authentication_failed", message: `API Error: ${String(error)}` },
      retryable: false,
    };
  }

  const idleMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;

  async function attempt(
    request: ModelRequest,
  ): Promise<ModelResponse | (ModelFailure & { stalled?: true })> {
    if (client === undefined) return clientFailure!;
    const idle = new AbortController();
    let idleTimer: NodeJS.Timeout | undefined = setTimeout(() => idle.abort(), idleMs);
    try {
      const body = buildRequestBody(
        request,
        options.model,
        options.maxTokens ?? defaultMaxTokens(options.model),
      );
      const stream = await client.stream(body, AbortSignal.any([request.signal, idle.signal]));
      clearTimeout(idleTimer);
      idleTimer = undefined;
      const watched = watchIdle(stream, idleMs, () => idle.abort());
      return await readMessageStream(watched, request);
    } catch (error) {
      if (idle.signal.aborted && !request.signal.aborted) {
        const seconds = Math.round(idleMs / 100) / 10;
        return {
          error: {
            subtype: "network_error",
            message: `API Error: no data from the API for ${seconds} s`,
          },
          retryable: true,
          stalled: true,
        };
      }
      return classifyFailure(error, request.signal);
    } finally {
      clearTimeout(idleTimer);
    }
  }

  async function complete(request: ModelRequest): Promise<ModelOutcome> {
    let stalls = 0;
    for (let retry = 0; ; retry++) {
      if (request.signal.aborted) return { ok: false, error: abortedFailure().error };
      const result = await attempt(request);
      if (!("retryable" in result)) return { ok: true, response: result };
      if (result.stalled === true) {
        stalls += 1;
        if (stalls > STALL_RETRIES || retry >= maxRetries) {
          const message = stallMessage(idleMs, stalls);
          return { ok: false, error: { subtype: "network_error", message } };
        }
      }
      if (!result.retryable || retry >= maxRetries) return { ok: false, error: result.error };
      // A stall has waited its bound already: it is tried again at once.
      const delayMs = result.stalled === true ? 0 : retryDelayMs(retry + 1, result.header, timing);
      if (delayMs === undefined) return { ok: false, error: result.error };
      request.onRetry?.({
        attempt: retry + 1,
        maxRetries,
        delayMs,
        status: result.error.status,
        message: result.error.message,
      });
      if (!(await waitUnlessAborted(delayMs, request.signal))) {
        return { ok: false, error: abortedFailure().error };
      }
    }
  }

  return {
    name: options.model,
    complete: async (request) => {
      try {
        return await complete(request);
      } catch (error) {
        const subtype = request.signal.aborted ? "aborted" : "api_error";
        return { ok: false, error: { subtype, message: `API Error: ${String(error)}` } };
      }
    },
  };
}
