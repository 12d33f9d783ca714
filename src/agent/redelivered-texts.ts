import type { Message } from "../model/types.js";

/**
 * The user's texts a resumed conversation already holds from the turn it was in when its
 * process died: everything the user said after the last assistant message that ended a turn
 * (one without a tool call). A host that restarts delivers those messages again, unanswered
 * as they are (the gateway replays what was not answered), and each is then not added to the
 * conversation a second time: the model sees it once. Each text is taken once; the rest are
 * forgotten when the first turn after the resume ends, so a message sent anew later is new.
 */
export class RedeliveredTexts {
  #texts: string[];

  constructor(history: readonly Message[] | undefined) {
    this.#texts = history === undefined ? [] : unfinishedTurnTexts(history);
  }

  /** Whether `text` is one the conversation holds already (taken: a second copy is new). */
  take(text: string): boolean {
    const index = this.#texts.indexOf(text);
    if (index === -1) return false;
    this.#texts.splice(index, 1);
    return true;
  }

  forget(): void {
    this.#texts = [];
  }
}

function unfinishedTurnTexts(history: readonly Message[]): string[] {
  const texts: string[] = [];
  for (let index = history.length - 1; index >= 0; index -= 1) {
    const message = history[index] as Message;
    const blocks =
      typeof message.content === "string"
        ? [{ type: "text" as const, text: message.content }]
        : message.content;
    if (message.role === "assistant") {
      if (!blocks.some((block) => block.type === "tool_use")) break;
      continue;
    }
    for (const block of [...blocks].reverse()) {
      if (block.type === "text") texts.unshift(block.text);
    }
  }
  return texts;
}
