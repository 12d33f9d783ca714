import type { HeaderReader } from "./retry-policy.js";

/**
 * The Messages API said no: an error status, or an `error` event inside a stream (which has no
 * status of its own). `type` is the API's error type (`overloaded_error`, ...), `detail` its
 * message, or the raw body when it was not the API's JSON.
 */
export class ApiError extends Error {
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly detail: string;
  readonly header: HeaderReader;

  constructor(status: number | undefined, body: unknown, header: HeaderReader) {
    const error = (body as { error?: { type?: unknown; message?: unknown } } | null)?.error;
    const type = typeof error?.type === "string" ? error.type : undefined;
    const detail =
      typeof error?.message === "string"
        ? error.message
        : typeof body === "string" && body.trim() !== ""
          ? body.trim().slice(0, 1000)
          : body !== undefined && typeof body !== "string"
            ? JSON.stringify(body)
            : `${status ?? "stream"} status code (no body)`;
    super(`${status ?? "stream"} ${type === undefined ? "" : `${type}: `}${detail}`);
    this.name = "ApiError";
    this.status = status;
    this.type = type;
    this.detail = detail;
    this.header = header;
  }
}

/** The request or its response stream broke off before the API answered in full. */
export class ApiConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ApiConnectionError";
  }
}

/** Parses `text` as JSON, or gives it back as it is. */
export function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
