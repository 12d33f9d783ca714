import { estimateTokens } from "../model/token-estimate.js";
import type { ContentBlock, Message } from "../model/types.js";
import { SUMMARY_OPENING } from "./compaction-prompt.js";

/**
 * Where a conversation may be cut for compaction: the kept part must start with an
 * assistant message or a user message without tool results, so no `tool_result` is
 * ever separated from its `tool_use`.
 */
export function isCutPoint(history: readonly Message[], index: number): boolean {
  if (index <= 0 || index > history.length) return false;
  if (index === history.length) return true;
  const message = history[index] as Message;
  if (message.role === "assistant") return true;
  return typeof message.content === "string" || !message.content.some(isToolResult);
}

function isToolResult(block: ContentBlock): boolean {
  return block.type === "tool_result";
}

/** True for the head message a compaction wrote. */
export function isSummaryMessage(message: Message | undefined): boolean {
  if (message === undefined || message.role !== "user") return false;
  const first = typeof message.content === "string" ? message.content : message.content[0];
  const text = typeof first === "string" ? first : first?.type === "text" ? first.text : "";
  return text.startsWith(SUMMARY_OPENING);
}

/**
 * The index from which the most recent messages are kept verbatim: the earliest cut point
 * whose tail fits `keepTokens`. A conversation waiting for the model keeps at least its
 * last step (the prompt, or the last tool call with its results), whatever its size.
 * 0 (or 1 after a summary) means there is nothing before that step to summarize.
 */
export function keptFrom(history: readonly Message[], keepTokens: number): number {
  let latest = history.length;
  if (history.at(-1)?.role === "user") {
    latest = history.length - 1;
    while (latest > 0 && !isCutPoint(history, latest)) latest--;
  }
  let chosen = latest;
  let tail = 0;
  for (let index = history.length - 1; index > 0; index--) {
    tail += estimateTokens(history[index]);
    if (tail > keepTokens) break;
    if (index <= latest && isCutPoint(history, index)) chosen = index;
  }
  // After a summary, a tail that fits whole would leave nothing new to summarize: then all of
  // it up to the last step is (so `/compact` after one short exchange compacts, as Claude
  // Code's does, and an auto compaction is not stuck on one big exchange).
  return chosen <= (isSummaryMessage(history[0]) ? 1 : 0) ? latest : chosen;
}

/**
 * Where a manual `/compact` cuts: at the most recent exchange (the last prompt the user typed,
 * not tool results, and all that followed it), so everything before it is summarized, as
 * Claude Code's `/compact` keeps only the summary and the last exchange. Falls back to
 * `keptFrom` when the conversation holds no earlier exchange to summarize.
 */
export function manualCut(history: readonly Message[], keepTokens: number): number {
  const head = isSummaryMessage(history[0]) ? 1 : 0;
  for (let index = history.length - 1; index > head; index--) {
    const message = history[index] as Message;
    if (message.role === "user" && isCutPoint(history, index)) return index;
  }
  return keptFrom(history, keepTokens);
}

/** The texts the user typed in `messages` (not tool results, notifications or summaries). */
export function userTexts(messages: readonly Message[]): string[] {
  const texts: string[] = [];
  for (const message of messages) {
    if (message.role !== "user") continue;
    const blocks: ContentBlock[] =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : message.content;
    // A summary's own text is not the user's; a prompt merged after it is.
    for (const block of isSummaryMessage(message) ? blocks.slice(1) : blocks) {
      if (block.type !== "text") continue;
      const text = block.text.trim();
      if (
        text === "" ||
        /^(<task_notification|\[Request interrupted|Stop hook feedback)/.test(text)
      )
        continue;
      texts.push(text);
    }
  }
  return texts;
}

/**
 * The user's messages to carry word for word within `budget` tokens: the first one (the
 * goal, usually), then the most recent that fit, in their original order. A first message
 * bigger than half the budget is cut, saying so.
 */
export function pinnedTexts(texts: readonly string[], budget: number): string[] {
  if (texts.length === 0) return [];
  const first = texts[0] as string;
  const half = Math.floor(budget / 2);
  const head =
    estimateTokens(first) <= half
      ? first
      : `${first.slice(0, Math.max(0, half * 3))}\n[... cut to fit the context window]`;
  let left = budget - estimateTokens(head);
  const recent: string[] = [];
  for (let index = texts.length - 1; index > 0; index--) {
    const text = texts[index] as string;
    const cost = estimateTokens(text);
    if (cost > left) break;
    left -= cost;
    recent.unshift(text);
  }
  return [head, ...recent];
}

/**
 * Where the oldest exchange of `history[from..]` ends: the next user message that starts an
 * exchange (a prompt, not tool results), or undefined when there is none before `limit`.
 */
export function nextExchange(
  history: readonly Message[],
  from: number,
  limit: number,
): number | undefined {
  for (let index = from + 1; index < limit; index++) {
    const message = history[index] as Message;
    if (message.role === "user" && isCutPoint(history, index)) return index;
  }
  return undefined;
}
