import { StringDecoder } from "node:string_decoder";

/**
 * NDJSON framing for a child's stdout, written out instead of `readline`
 * because readline splits on U+2028/U+2029 (legal inside JSON strings), has no
 * line-length cap, and hides the partial line a crash leaves behind.
 *
 * Contract: lines end at LF only; a trailing CR is stripped; blank lines are
 * skipped; a line that is not JSON, or that grows past `maxLineLength`
 * characters (the partial line counts), is reported through `onError` and
 * framing resumes after the next LF; `end()` flushes a last unterminated line.
 * A value nested deeper than `MAX_NESTING` arrays and objects is reported as
 * invalid too: JSON.parse reads any depth, but JSON.stringify and every other
 * recursive walk of it overflow the stack (a 200,000-deep line from an agent
 * once threw out of the gateway's event bus). Never throws.
 */
export interface NdjsonHandlers {
  onValue(value: unknown, line: string): void;
  onError(error: NdjsonError): void;
}

/**
 * `line_too_long` comes as soon as a line passes the cap (the rest of it is then skipped);
 * `line_dropped` once that line has ended (or the stream did), with its whole `length`.
 */
export interface NdjsonError {
  kind: "invalid_json" | "line_too_long" | "line_dropped";
  message: string;
  /** The start of the offending line, at most 200 characters. */
  excerpt: string;
  /** For `line_dropped`: the line's length in characters. */
  length?: number;
}

/** Deeper than any line an agent has reason to print; far from where recursion overflows. */
export const MAX_NESTING = 256;

/** 16 MiB: large enough for a big tool result, small enough to bound memory. */
export const DEFAULT_MAX_LINE_LENGTH = 16 * 1024 * 1024;

export class NdjsonDecoder {
  readonly #decoder = new StringDecoder("utf8");
  readonly #handlers: NdjsonHandlers;
  readonly #maxLineLength: number;
  #partial = "";
  #discarding = false;
  /** Of the line being skipped: its length so far and its start. */
  #dropped = { length: 0, excerpt: "" };

  constructor(handlers: NdjsonHandlers, options: { maxLineLength?: number } = {}) {
    this.#handlers = handlers;
    this.#maxLineLength = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
  }

  push(chunk: Buffer | string): void {
    const text = typeof chunk === "string" ? chunk : this.#decoder.write(chunk);
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      const piece = text.slice(start, newline);
      start = newline + 1;
      if (this.#discarding) {
        this.#discarding = false;
        this.#dropped.length += piece.length;
        this.#reportDropped();
      } else if (this.#partial.length + piece.length > this.#maxLineLength) {
        this.#reportTooLong(
          this.#partial + piece.slice(0, 200),
          this.#partial.length + piece.length,
        );
        this.#partial = "";
        this.#reportDropped();
      } else {
        const line = this.#partial + piece;
        this.#partial = "";
        this.#emit(line);
      }
    }
    const rest = text.slice(start);
    if (this.#discarding) {
      this.#dropped.length += rest.length;
      return;
    }
    if (this.#partial.length + rest.length > this.#maxLineLength) {
      this.#reportTooLong(this.#partial + rest.slice(0, 200), this.#partial.length + rest.length);
      this.#partial = "";
      this.#discarding = true;
      return;
    }
    this.#partial += rest;
  }

  end(): void {
    const rest = this.#partial + this.#decoder.end();
    this.#partial = "";
    if (this.#discarding) {
      this.#dropped.length += rest.length;
      this.#reportDropped();
    } else this.#emit(rest);
    this.#discarding = false;
  }

  #emit(rawLine: string): void {
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.#handlers.onError({
        kind: "invalid_json",
        message: error instanceof Error ? error.message : String(error),
        excerpt: line.slice(0, 200),
      });
      return;
    }
    if (nestedDeeperThan(value, MAX_NESTING)) {
      this.#handlers.onError({
        kind: "invalid_json",
        message: `JSON nested deeper than ${MAX_NESTING} levels`,
        excerpt: line.slice(0, 200),
      });
      return;
    }
    this.#handlers.onValue(value, line);
  }

  #reportTooLong(start: string, length: number): void {
    this.#dropped = { length, excerpt: start.slice(0, 200) };
    this.#handlers.onError({
      kind: "line_too_long",
      message: `line longer than ${this.#maxLineLength} characters skipped`,
      excerpt: this.#dropped.excerpt,
    });
  }

  #reportDropped(): void {
    const { length, excerpt } = this.#dropped;
    this.#handlers.onError({
      kind: "line_dropped",
      message: `line of ${length} characters skipped (over the cap of ${this.#maxLineLength})`,
      excerpt,
      length,
    });
  }
}

/** Whether `value` holds arrays or objects more than `limit` deep; a walk with its own stack, not recursion. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== "object") return false;
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (depth > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item as object)) {
      if (child !== null && typeof child === "object") pending.push([child, depth + 1]);
    }
  }
  return false;
}

/** One JSON value as an NDJSON line. `JSON.stringify` escapes every LF inside strings. */
export function encodeNdjsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}
