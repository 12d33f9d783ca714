/**
 * How a Messages API call fails before a reply is whole. `ApiError`: the API answered with an
 * error (an HTTP status, or an `error` event inside the stream, which has none). Anything else
 * (a refused connection, a reset, a timeout, a stream cut short) is an `ApiConnectionError` or
 * the socket's own error, which the caller reports as a connection failure and retries.
 */
import type { HeaderReader } from "./retry-policy.js";

/** The API's error body, `{ type: "error", error: { type, message } }`, or its raw text. */
interface ErrorBody {
  error?: { type?: unknown; message?: unknown };
}

/**
 * The message the SDK's errors carried (rudder's error texts are built on it): the body's
 * `error.message`, else the body as JSON, else the raw text, after the status when there is one.
 */
function errorMessage(status: number | undefined, body: unknown, text: string | undefined) {
  const inner = (body as { message?: unknown } | undefined)?.message;
  const detail =
    inner !== undefined && inner !== null && inner !== ""
      ? typeof inner === "string"
        ? inner
        : JSON.stringify(inner)
      : body !== undefined && body !== null
        ? JSON.stringify(body)
        : text;
  if (status !== undefined && detail) return `${status} ${detail}`;
  if (status !== undefined) return `${status} status code (no body)`;
  return detail || "(no status code or body)";
}

export class ApiError extends Error {
  /** The HTTP status; undefined for an error event inside a stream. */
  readonly status: number | undefined;
  /** The parsed error body (or its text when it was not JSON). */
  readonly body: unknown;
  /** The error's `type` (`overloaded_error`, `rate_limit_error` ...) when the body named one. */
  readonly type: string | undefined;
  /** The response's headers (`retry-after`, rate-limit resets, `x-should-retry`). */
  readonly header: HeaderReader;

  constructor(status: number | undefined, body: unknown, header: HeaderReader, text?: string) {
    super(errorMessage(status, body, text));
    this.name = "ApiError";
    this.status = status;
    this.body = body;
    this.header = header;
    const type = (body as ErrorBody | undefined)?.error?.type;
    this.type = typeof type === "string" ? type : undefined;
  }

  /** The body's `error.message`, the API's own words, when it has one. */
  get apiMessage(): string | undefined {
    const message = (this.body as ErrorBody | undefined)?.error?.message;
    return typeof message === "string" ? message : undefined;
  }
}

/** The connection failed or ended early; `cause` holds the socket's error when there was one. */
export class ApiConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ApiConnectionError";
  }
}
