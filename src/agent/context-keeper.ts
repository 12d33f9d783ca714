import { contextOverflowOf } from "../model/context-overflow.js";
import { estimateTokens } from "../model/token-estimate.js";
import {
  addUsage,
  type ContentBlock,
  emptyUsage,
  type Message,
  type Model,
  type ToolSpec,
  type Usage,
} from "../model/types.js";
import type { CompactionBoundary, CompactionTrigger } from "./compaction-boundary.js";
import {
  isSummaryMessage,
  keptFrom,
  manualCut,
  nextExchange,
  pinnedTexts,
  userTexts,
} from "./compaction-plan.js";
import { summaryMessageText, summaryRequest } from "./compaction-prompt.js";
import { type ContextBudget, maxOutputTokensFor, narrowedBudget } from "./context-budget.js";
import { messageText } from "./conversation.js";
import type { AgentEventSink } from "./events.js";

/** The parts of a model request besides its messages. */
export interface RequestShape {
  system?: string;
  tools: ToolSpec[];
}

export type CompactionResult =
  | { ok: true; boundary: CompactionBoundary; usage: Usage }
  | { ok: false; error: string; aborted: boolean; usage: Usage };

export type FitResult =
  | { ok: true; usage: Usage }
  | { ok: false; error: string; aborted: boolean; usage: Usage };

/** Summary attempts, each dropping the oldest exchange when the request did not fit. */
const MAX_SUMMARY_ATTEMPTS = 12;
/** The user texts kept across compactions (the first always stays). */
const MAX_USER_TEXTS = 400;

/**
 * Keeps a conversation inside its model's context window. Knows how full it is (the
 * usage the API reported for the last call plus an estimate of what was added since)
 * and compacts it in place: one model call without tools run asks for a structured
 * summary, and the history becomes that summary, the user's own messages word for word
 * (the first, then the latest that fit) and the most recent exchanges verbatim. Never
 * rejects: failures come back as data.
 */
export class ContextKeeper {
  readonly #model: Model;
  readonly #budgetFor: (model: string) => ContextBudget;
  #budget: { model: string; learned: number | undefined; budget: ContextBudget } | undefined;
  #learnedWindow: number | undefined;
  #anchor: { tokens: number; length: number } | undefined;
  #userTexts: string[];

  /**
   * `budget` is fixed, or a function of the model's name: then it follows the model, so a
   * session switched to another model (`set_model`) compacts in that model's window.
   */
  constructor(
    model: Model,
    budget: ContextBudget | ((model: string) => ContextBudget),
    restored: { userTexts?: string[] } = {},
  ) {
    this.#model = model;
    this.#budgetFor = typeof budget === "function" ? budget : () => budget;
    this.#userTexts = [...(restored.userTexts ?? [])];
  }

  /** The window and budgets of the model now in use (narrowed to a window the API reported). */
  get budget(): ContextBudget {
    const model = this.#model.name;
    if (this.#budget?.model !== model || this.#budget.learned !== this.#learnedWindow) {
      const base = this.#budgetFor(model);
      const budget =
        this.#learnedWindow === undefined
          ? base
          : narrowedBudget(base, this.#learnedWindow, maxOutputTokensFor(model));
      this.#budget = { model, learned: this.#learnedWindow, budget };
    }
    return this.#budget.budget;
  }

  /**
   * The API refused a request as too long and named its maximum: from now on the budgets are
   * that window's (a compatible server's window can be smaller than the model's known one).
   */
  learnWindow(maximum: number): void {
    if (!(maximum > 0)) return;
    this.#learnedWindow = Math.min(this.#learnedWindow ?? maximum, maximum);
  }

  /** The tokens a request with `history` would carry. */
  tokens(history: readonly Message[], shape: RequestShape): number {
    const anchor = this.#anchor;
    if (anchor !== undefined && anchor.length <= history.length) {
      return anchor.tokens + estimateTokens(history.slice(anchor.length));
    }
    return estimateTokens(shape.system) + estimateTokens(shape.tools) + estimateTokens(history);
  }

  /** Takes the usage the API reported for the call that produced `history`'s last message. */
  observe(history: readonly Message[], usage: Usage): void {
    const tokens =
      usage.input_tokens +
      usage.cache_read_input_tokens +
      usage.cache_creation_input_tokens +
      usage.output_tokens;
    this.#anchor = tokens > 0 ? { tokens, length: history.length } : undefined;
  }

  /** Forgets everything (`/clear`). */
  reset(): void {
    this.#anchor = undefined;
    this.#userTexts = [];
  }

  /** True when there is something before the conversation's last step to summarize. */
  canCompact(history: readonly Message[]): boolean {
    const cut = keptFrom(history, this.budget.keepTokens);
    return cut > (isSummaryMessage(history[0]) ? 1 : 0);
  }

  /** True when the next request would pass the threshold and auto compaction can help. */
  needsCompaction(history: readonly Message[], shape: RequestShape): boolean {
    return (
      this.budget.auto &&
      this.tokens(history, shape) > this.budget.threshold &&
      this.canCompact(history)
    );
  }

  /**
   * Before a model call, when `needsCompaction`: compacts. A compaction that fails leaves
   * the history as it was; the call then goes ahead, and the API's answer decides.
   */
  async fit(
    history: Message[],
    shape: RequestShape,
    signal: AbortSignal,
    emit: AgentEventSink,
  ): Promise<FitResult> {
    const result = await this.compact(history, shape, "auto", { signal, emit });
    if (!result.ok && result.aborted) return result;
    return { ok: true, usage: result.usage };
  }

  async compact(
    history: Message[],
    shape: RequestShape,
    trigger: CompactionTrigger,
    options: { signal: AbortSignal; emit: AgentEventSink; focus?: string },
  ): Promise<CompactionResult> {
    const { emit } = options;
    const startedAt = performance.now();
    const preTokens = this.tokens(history, shape);
    emit({ type: "compaction_start", trigger, preTokens });
    const fail = (error: string, usage: Usage, aborted = false): CompactionResult => {
      emit({ type: "compaction_end", trigger, preTokens, postTokens: preTokens, error });
      return { ok: false, error, aborted, usage };
    };
    // Automatic compaction keeps the recent part that fits `keepTokens`; a manual one keeps
    // only the last exchange (the person asked for the context to shrink).
    const cut =
      trigger === "manual"
        ? manualCut(history, this.budget.keepTokens)
        : keptFrom(history, this.budget.keepTokens);
    if (cut <= (isSummaryMessage(history[0]) ? 1 : 0)) {
      return fail("Not enough conversation to compact yet.", emptyUsage());
    }
    const summarized = await this.#summarize(history, shape, cut, options);
    if (!summarized.ok) return fail(summarized.error, summarized.usage, summarized.aborted);

    this.#userTexts.push(...userTexts(history.slice(0, cut)));
    if (this.#userTexts.length > MAX_USER_TEXTS) {
      this.#userTexts.splice(1, this.#userTexts.length - MAX_USER_TEXTS);
    }
    // The user's earlier messages are pinned word for word beside an automatic summary; a
    // manual one is the summary alone (which quotes the user's instructions), so it shrinks.
    const pinned =
      trigger === "manual" ? [] : pinnedTexts(this.#userTexts, this.budget.pinnedTokens);
    const text = summaryMessageText(summarized.summary, pinned);
    const kept = history.slice(cut);
    const summaryBlock: ContentBlock = { type: "text", text };
    const first = kept[0];
    const compacted: Message[] =
      first?.role === "user"
        ? [
            {
              role: "user",
              content: [
                summaryBlock,
                ...(typeof first.content === "string"
                  ? [{ type: "text", text: first.content } satisfies ContentBlock]
                  : first.content),
              ],
            },
            ...kept.slice(1),
          ]
        : [{ role: "user", content: [summaryBlock] }, ...kept];
    history.splice(0, history.length, ...compacted);
    const postTokens = this.tokens(history, shape);
    this.#anchor = undefined;
    const boundary: CompactionBoundary = {
      trigger,
      preTokens,
      postTokens,
      durationMs: Math.round(performance.now() - startedAt),
      at: new Date().toISOString(),
      userTexts: [...this.#userTexts],
    };
    emit({
      type: "compaction_end",
      trigger,
      preTokens,
      postTokens,
      durationMs: boundary.durationMs,
      summary: text,
      boundary,
    });
    return { ok: true, boundary, usage: summarized.usage };
  }

  /**
   * Asks the model for the summary of `history` (the whole of it, so the request shares
   * its prefix, and its cache, with the last call). A request too big for the window
   * drops the oldest exchanges (an earlier summary at the head stays) and tries again.
   */
  async #summarize(
    history: readonly Message[],
    shape: RequestShape,
    cut: number,
    options: { signal: AbortSignal; focus?: string },
  ): Promise<
    | { ok: true; summary: string; usage: Usage }
    | { ok: false; error: string; aborted: boolean; usage: Usage }
  > {
    const head = isSummaryMessage(history[0]) ? 1 : 0;
    const prompt = summaryRequest(options.focus);
    const room = this.budget.window - this.budget.summaryMaxTokens;
    let usage = emptyUsage();
    let from = head;
    let dropped = 0;
    const total = this.tokens(history, shape) + estimateTokens(prompt);
    for (let attempt = 0; attempt < MAX_SUMMARY_ATTEMPTS; attempt++) {
      const later = nextExchange(history, from, cut);
      if (total - dropped > room && later !== undefined) {
        dropped += estimateTokens(history.slice(from, later));
        from = later;
        continue;
      }
      const messages = withRequest([...history.slice(0, head), ...history.slice(from)], prompt);
      const reply = await this.#model.complete({
        ...(shape.system === undefined ? {} : { system: shape.system }),
        messages,
        tools: shape.tools,
        maxTokens: this.budget.summaryMaxTokens,
        signal: options.signal,
      });
      if (!reply.ok) {
        if (reply.error.subtype === "aborted") {
          return { ok: false, error: "Compaction interrupted.", aborted: true, usage };
        }
        if (contextOverflowOf(reply.error) !== undefined && later !== undefined) {
          dropped += estimateTokens(history.slice(from, later));
          from = later;
          continue;
        }
        return {
          ok: false,
          error: `Compaction failed: ${reply.error.message}`,
          aborted: false,
          usage,
        };
      }
      usage = addUsage(usage, reply.response.usage);
      const summary = messageText({ role: "assistant", content: reply.response.content });
      if (summary.trim() === "") {
        return {
          ok: false,
          error: "Compaction failed: the model wrote no summary.",
          aborted: false,
          usage,
        };
      }
      return { ok: true, summary, usage };
    }
    return {
      ok: false,
      error:
        "Compaction failed: the conversation does not fit the window even after dropping its oldest exchanges.",
      aborted: false,
      usage,
    };
  }
}

/** `messages` with the summary request as the last user text, not changing the originals. */
function withRequest(messages: Message[], prompt: string): Message[] {
  const last = messages.at(-1);
  if (last === undefined || last.role !== "user") {
    return [...messages, { role: "user", content: prompt }];
  }
  const blocks: ContentBlock[] =
    typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
  return [
    ...messages.slice(0, -1),
    { role: "user", content: [...blocks, { type: "text", text: prompt }] },
  ];
}
