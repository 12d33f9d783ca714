import { StringDecoder } from "node:string_decoder";

/** Longest input line accepted; the partial line counts, so a flood cannot grow memory. */
export const MAX_INPUT_LINE_CHARS = 32 * 1024 * 1024;

export type SplitLine = { ok: true; text: string } | { ok: false; error: string };

/**
 * Splits a byte stream into lines on LF (not `readline`, which also splits on
 * U+2028/U+2029 inside JSON strings). Strips a trailing CR, skips blank lines, decodes
 * UTF-8 across chunk borders, and reports a line over the cap once, then drops it.
 */
export class LineSplitter {
  readonly #decoder = new StringDecoder("utf8");
  readonly #maxChars: number;
  #partial = "";
  #overflowing = false;

  constructor(maxChars = MAX_INPUT_LINE_CHARS) {
    this.#maxChars = maxChars;
  }

  push(chunk: Buffer | string): SplitLine[] {
    const text = typeof chunk === "string" ? chunk : this.#decoder.write(chunk);
    return this.#take(text, false);
  }

  /** The last line when the stream ends without a newline. */
  end(): SplitLine[] {
    return this.#take(this.#decoder.end(), true);
  }

  #take(text: string, final: boolean): SplitLine[] {
    const lines: SplitLine[] = [];
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      this.#complete(text.slice(start, newline), lines);
      start = newline + 1;
    }
    const rest = text.slice(start);
    if (final) {
      this.#complete(rest, lines);
      return lines;
    }
    if (this.#overflowing) return lines;
    this.#partial += rest;
    if (this.#partial.length > this.#maxChars) {
      this.#partial = "";
      this.#overflowing = true;
      lines.push({ ok: false, error: `input line longer than ${this.#maxChars} characters` });
    }
    return lines;
  }

  #complete(piece: string, lines: SplitLine[]): void {
    if (this.#overflowing) {
      this.#overflowing = false;
      return;
    }
    let line = this.#partial + piece;
    this.#partial = "";
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() === "") return;
    if (line.length > this.#maxChars) {
      lines.push({ ok: false, error: `input line longer than ${this.#maxChars} characters` });
      return;
    }
    lines.push({ ok: true, text: line });
  }
}
