import { clearScreenDown, cursorTo, moveCursor } from "node:readline";

/** The part of the line editor the screen needs (see `ChatInput`). */
export interface LiveInput {
  readonly line: string;
  cursorRows(): number;
  draw(prompt: string): void;
}

export interface ChatScreenOptions {
  output: NodeJS.WritableStream & { columns?: number };
  /** The line editor; absent for plain output (no terminal). */
  input?: LiveInput;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal escapes is the point.
const ESCAPES = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/** Terminal columns taken by `text` (escapes take none; one column a character). */
export function displayWidth(text: string): number {
  return [...text.replace(ESCAPES, "")].length;
}

/**
 * The terminal as the chat draws it: output scrolls above one live line at
 * the bottom, which the line editor owns (a prompt or a spinner, then what
 * the user is typing). Streamed text is written as it arrives; while the user
 * is typing, it is held back until its line is complete, so it never mixes
 * with the typed text. Without a line editor everything is written in order
 * and there is no live line.
 */
export class ChatScreen {
  readonly #output: ChatScreenOptions["output"];
  readonly #input: LiveInput | undefined;
  /** Text on the row the cursor is on, after the last newline written. */
  #partial = "";
  /** Streamed text not yet written, held while the user types. */
  #held = "";
  /** What the live line shows before the typed text; undefined: no live line. */
  #prompt: string | undefined;
  #liveVisible = false;

  constructor(options: ChatScreenOptions) {
    this.#output = options.output;
    this.#input = options.input;
  }

  get interactive(): boolean {
    return this.#input !== undefined;
  }

  /** Writes model text as it streams in. */
  stream(text: string): void {
    if (text === "") return;
    const typing = this.#liveVisible && (this.#input?.line ?? "") !== "";
    if (!typing) {
      const pending = this.#held + text;
      this.#held = "";
      this.#emit(pending);
      return;
    }
    this.#held += text;
    const cut = this.#held.lastIndexOf("\n");
    if (cut === -1) return;
    this.#emit(this.#held.slice(0, cut + 1));
    this.#held = this.#held.slice(cut + 1);
  }

  /** Ends the streamed line, if one is open. */
  endLine(): void {
    if (this.#held !== "") {
      const held = this.#held;
      this.#held = "";
      this.#emit(`${held}\n`);
    } else if (this.#partial !== "") {
      this.#emit("\n");
    }
  }

  /**
   * Prints whole lines above the live line. In a terminal an open streamed
   * line stays whole: it is taken off its row and written again below the
   * new lines (and held text stays held). Plain output ends the open line.
   */
  line(text: string): void {
    if (this.#input !== undefined) {
      const open = this.#partial;
      if (open !== "") {
        this.#eraseRows(this.#rowsOf(open) - 1);
        this.#partial = "";
      }
      this.#emit(`${text}\n${open}`);
      return;
    }
    const promptShowing = this.#prompt !== undefined && this.#partial === this.#prompt;
    this.endLine();
    this.#emit(`${text}\n`);
    if (promptShowing) this.#emit(this.#prompt ?? "");
  }

  /**
   * Sets the live line's prompt (undefined removes the live line). Without a
   * line editor the prompt is printed once, as plain text.
   */
  setPrompt(prompt: string | undefined): void {
    if (this.#input === undefined) {
      const showing = this.#prompt !== undefined && this.#partial === this.#prompt;
      if (prompt !== undefined && prompt !== this.#prompt) {
        this.endLine();
        this.#emit(prompt);
      } else if (prompt === undefined && showing) {
        this.#emit("\n");
      }
      this.#prompt = prompt;
      return;
    }
    if (prompt === this.#prompt) return;
    this.#prompt = prompt;
    this.#hideLive();
    this.#showLive();
  }

  /**
   * Before a key reaches the line editor: if streamed text occupies the
   * cursor's row, it is taken off the screen (and held, to come back whole
   * with its line), so the key lands on the live line.
   */
  beforeKey(): void {
    if (this.#input === undefined || this.#liveVisible || this.#prompt === undefined) return;
    if (this.#partial !== "") {
      this.#eraseRows(this.#rowsOf(this.#partial) - 1);
      this.#held = this.#partial + this.#held;
      this.#partial = "";
    }
    this.#showLive();
  }

  /**
   * The line editor has just ended the typed line with a newline. With
   * `keepEcho` false the echoed prompt and text are erased, so the caller can
   * print its own version of them.
   */
  lineEntered(text: string, keepEcho: boolean): void {
    if (this.#input === undefined) {
      // No editor echo here: print what was read, so the transcript shows it.
      if (this.#prompt !== undefined && this.#partial === this.#prompt) {
        this.#emit(`${text}\n`);
      }
      // The printed prompt has been used up; the next one is printed anew.
      this.#prompt = undefined;
      return;
    }
    const wasVisible = this.#liveVisible;
    this.#liveVisible = false;
    this.#partial = "";
    if (wasVisible && !keepEcho) {
      const rows = this.#rowsOf(`${this.#prompt ?? ""}${text}`);
      moveCursor(this.#output, 0, -rows);
      cursorTo(this.#output, 0);
      clearScreenDown(this.#output);
    }
    this.#showLive();
  }

  /** Redraws the live line (after its prompt's content changed, e.g. a spinner tick). */
  refresh(): void {
    if (this.#liveVisible) {
      this.#hideLive();
      this.#showLive();
    }
  }

  /** Takes the live line off the screen for good and ends any open line. */
  close(): void {
    this.#prompt = undefined;
    this.#hideLive();
    this.endLine();
  }

  #rowsOf(text: string): number {
    const columns = this.#output.columns ?? 80;
    return Math.max(1, Math.ceil(displayWidth(text) / Math.max(1, columns)));
  }

  #eraseRows(rowsAbove: number): void {
    if (rowsAbove > 0) moveCursor(this.#output, 0, -rowsAbove);
    cursorTo(this.#output, 0);
    clearScreenDown(this.#output);
  }

  #hideLive(): void {
    if (!this.#liveVisible || this.#input === undefined) return;
    this.#eraseRows(this.#input.cursorRows());
    this.#liveVisible = false;
  }

  #showLive(): void {
    if (this.#liveVisible || this.#input === undefined || this.#prompt === undefined) return;
    if (this.#partial !== "") return;
    this.#liveVisible = true;
    this.#input.draw(this.#prompt);
  }

  #emit(text: string): void {
    if (text === "") return;
    this.#hideLive();
    this.#output.write(text);
    const cut = text.lastIndexOf("\n");
    this.#partial = cut === -1 ? this.#partial + text : text.slice(cut + 1);
    this.#showLive();
  }
}
