import type { Message } from "../model/types.js";
import { appendUserText } from "./conversation.js";

/**
 * What Claude Code writes into the conversation when the user interrupts a turn (recorded from
 * 2.1.328), so that the model reads the next prompt as a new request and not as more of the one
 * it was cut off from. The tool-use form follows the cancelled tools' results.
 */
export const INTERRUPTED = "[Request interrupted by user]";
export const INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]";

/** Where the turn was when it was interrupted, as Claude Code's `terminal_reason` names it. */
export type InterruptedWhile = "aborted_streaming" | "aborted_tools";

/** Where a turn stood when its signal is found aborted between steps: after tools, or before a model call. */
export function interruptedBetweenSteps(history: readonly Message[]): InterruptedWhile {
  const last = history.at(-1);
  const afterTools =
    last?.role === "user" &&
    Array.isArray(last.content) &&
    last.content.some((block) => block.type === "tool_result");
  return afterTools ? "aborted_tools" : "aborted_streaming";
}

/**
 * Records an interrupt in `history`: the text the model had streamed so far (if any) stays as
 * its reply, as it was shown; then the user's interrupt marker. Returns the partial reply it
 * added (for the event stream) and the marker.
 */
export function recordInterruption(
  history: Message[],
  whileDoing: InterruptedWhile,
  partialText: string,
): { partial: Message | undefined; marker: string } {
  let partial: Message | undefined;
  // The API refuses a text block of whitespace only, so such a start of a reply is not kept.
  if (partialText.trim() !== "" && whileDoing === "aborted_streaming") {
    partial = { role: "assistant", content: [{ type: "text", text: partialText }] };
    history.push(partial);
  }
  const marker = whileDoing === "aborted_tools" ? INTERRUPTED_FOR_TOOL_USE : INTERRUPTED;
  appendUserText(history, marker);
  return { partial, marker };
}
