import type { ResultLine } from "./turn-result.js";

/** The most of what the model said that one answer keeps (then a note), under 1 MiB stored. */
export const MAX_SAID_CHARACTERS = 1_000_000;

/** What the model said between two results: its messages' texts, and what was cut. */
export interface Said {
  /** One text per assistant message, in order. */
  texts: string[];
  /** Characters past `MAX_SAID_CHARACTERS`, not kept. */
  dropped: number;
}

/**
 * Gathers the top-level texts the model says until the next `result`, the CLI's `result` being
 * only the last text block: an answer given before a tool call, or before a steered message
 * was read, would else be lost from the stored reply. The pieces of one message (the same
 * `message.id`: its blocks, or one long block written in pieces) join as they are; messages
 * join with a blank line. At most `maxCharacters` are kept, so a huge reply stays bounded.
 */
export class SaidText {
  readonly #maxCharacters: number;
  #texts: string[] = [];
  #lastMessageId: unknown;
  #length = 0;
  #dropped = 0;

  constructor(maxCharacters = MAX_SAID_CHARACTERS) {
    this.#maxCharacters = maxCharacters;
  }

  add(text: string, messageId: unknown): void {
    if (text === "") return;
    const room = this.#maxCharacters - this.#length;
    const kept = room >= text.length ? text : text.slice(0, Math.max(0, room));
    this.#dropped += text.length - kept.length;
    this.#length += kept.length;
    if (kept === "") return;
    const same = messageId !== undefined && messageId === this.#lastMessageId;
    if (same && this.#texts.length > 0) this.#texts[this.#texts.length - 1] += kept;
    else this.#texts.push(kept);
    this.#lastMessageId = messageId;
  }

  /** What was said since the last call, and starts again. */
  take(): Said {
    const said = { texts: this.#texts, dropped: this.#dropped };
    this.#texts = [];
    this.#lastMessageId = undefined;
    this.#length = 0;
    this.#dropped = 0;
    return said;
  }
}

/**
 * `line` with everything said before it as its text, joined by a blank line (as the results of
 * one turn are joined). The CLI's own text is added when it is not what was said last (a hook's
 * stop, say), however the last message's blocks were joined into it; when the text was cut, a
 * note says how much instead. An error, or a result nothing was said before, is kept as it is.
 */
export function withSaid(line: ResultLine, said: Said): ResultLine {
  if (said.texts.length === 0 || line.is_error === true) return line;
  const whole = said.texts.join("\n\n");
  if (said.dropped > 0) {
    const note = `\n[rudder: ${said.dropped} more characters not shown: a reply is stored up to ${MAX_SAID_CHARACTERS} characters]`;
    return { ...line, result: `${whole}${note}` };
  }
  const own = typeof line.result === "string" ? line.result : "";
  const squeezed = (text: string) => text.replace(/\s+/g, "");
  const told = own === "" || squeezed(whole).endsWith(squeezed(own));
  return { ...line, result: told ? whole : `${whole}\n\n${own}` };
}
