import { StringDecoder } from "node:string_decoder";

/** Longest line kept; a child that prints one endless line must not grow the tail unbounded. */
const MAX_LINE_LENGTH = 4096;

/**
 * The last `maxLines` lines a child wrote to stderr. Fed from a stream that is always drained,
 * so a child flooding stderr never blocks on a full pipe.
 */
export class StderrTail {
  readonly #maxLines: number;
  readonly #lines: string[] = [];
  #decoder = new StringDecoder("utf8");
  #partial = "";

  constructor(maxLines = 50) {
    this.#maxLines = maxLines;
  }

  push(chunk: Buffer | string): void {
    const text = this.#partial + (typeof chunk === "string" ? chunk : this.#decoder.write(chunk));
    const parts = text.split("\n");
    this.#partial = (parts.pop() ?? "").slice(-MAX_LINE_LENGTH);
    for (const part of parts.slice(-this.#maxLines)) this.#add(part);
  }

  /** Keeps an unterminated last line, and starts decoding afresh for the next child. */
  flush(): void {
    const rest = this.#partial + this.#decoder.end();
    this.#partial = "";
    this.#decoder = new StringDecoder("utf8");
    if (rest !== "") this.#add(rest);
  }

  lines(): string[] {
    return [...this.#lines];
  }

  text(): string {
    return this.#lines.join("\n");
  }

  #add(line: string): void {
    this.#lines.push(line.replace(/\r$/, "").slice(0, MAX_LINE_LENGTH));
    if (this.#lines.length > this.#maxLines) {
      this.#lines.splice(0, this.#lines.length - this.#maxLines);
    }
  }
}
