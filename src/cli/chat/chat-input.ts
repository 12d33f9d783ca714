import { createInterface, type Interface } from "node:readline";

export interface ChatInputHandlers {
  /** A line was entered (Enter), without its newline. */
  line(text: string): void;
  /** Ctrl-C (terminal only; elsewhere it is a real SIGINT). */
  interrupt(): void;
  /** Ctrl-D on an empty line, or the end of the input. */
  end(): void;
  /** Any key, before the line editor acts on it (terminal only). */
  keypress?(name: string | undefined, ctrl: boolean): void;
}

export interface ChatInputStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
  /** Use the line editor (raw mode, echo, Ctrl-C as a key). */
  terminal: boolean;
}

/**
 * Line input over `node:readline`. In a terminal the line editor owns the
 * bottom line of the screen: `draw` puts a prompt there and keeps whatever
 * the user has typed so far, so output and a spinner can go above it without
 * losing the text being typed.
 */
export class ChatInput {
  readonly terminal: boolean;
  readonly #readline: Interface;
  #closed = false;

  constructor(streams: ChatInputStreams, handlers: ChatInputHandlers) {
    this.terminal = streams.terminal;
    this.#readline = createInterface({
      input: streams.input,
      output: streams.output,
      terminal: streams.terminal,
      prompt: "",
      historySize: 200,
    });
    this.#readline.on("line", (text) => handlers.line(text));
    this.#readline.on("close", () => {
      this.#closed = true;
      handlers.end();
    });
    if (streams.terminal) {
      this.#readline.on("SIGINT", () => handlers.interrupt());
      const { keypress } = handlers;
      if (keypress !== undefined) {
        // Prepended so it runs before the line editor echoes the key.
        streams.input.prependListener(
          "keypress",
          (_text: string | undefined, key: { name?: string; ctrl?: boolean } | undefined) =>
            keypress(key?.name, key?.ctrl === true),
        );
      }
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** What has been typed on the current line so far ("" outside a terminal). */
  get line(): string {
    return this.terminal ? this.#readline.line : "";
  }

  /** Rows between the start of the prompt and the cursor (long lines wrap). */
  cursorRows(): number {
    return this.terminal ? this.#readline.getCursorPos().rows : 0;
  }

  /**
   * Draws `prompt` and the typed text on the cursor's row, which the caller
   * has cleared and left at column 0.
   */
  draw(prompt: string): void {
    if (this.#closed || !this.terminal) return;
    this.#readline.setPrompt(prompt);
    // The editor remembers how many rows its last drawing took and moves up
    // that many before redrawing; the caller has already cleared those rows.
    (this.#readline as unknown as { prevRows: number }).prevRows = 0;
    this.#readline.prompt(true);
  }

  /** Puts `text` into the line being edited, as if typed (to send again or edit). */
  prefill(text: string): void {
    if (this.#closed || !this.terminal) return;
    this.#readline.write(text);
  }

  /** Forgets the typed text (Ctrl-C at an idle prompt). */
  clearLine(): void {
    if (this.#closed || !this.terminal) return;
    this.#readline.write(null, { ctrl: true, name: "e" });
    this.#readline.write(null, { ctrl: true, name: "u" });
  }

  close(): void {
    if (this.#closed) return;
    this.#readline.close();
  }
}
