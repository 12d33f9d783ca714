/**
 * What one turn has spent so far, from the usage of each model call its agent reports in its
 * stream-json `assistant` lines (either engine; Claude Code repeats a call's usage on each of its
 * content blocks, so calls count once by message id), and when a turn over its budget is to be
 * stopped: at its next model call, once the tools the last call asked for have answered.
 */
import type { BudgetBreach } from "./budget-text.js";
import { type PricedUsage, pricedUsage, usageTokens } from "./usage-tokens.js";

/** Prices one model call in US dollars. */
export type UsagePrice = (model: string, usage: PricedUsage) => number;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function blocks(message: unknown): Json[] {
  if (!isObject(message) || !Array.isArray(message.content)) return [];
  return message.content.filter(isObject);
}

export class TurnMeter {
  readonly channelId: string;
  readonly binding: string | null;
  readonly #price: UsagePrice;
  readonly #calls = new Map<string, { usd: number; input: number; output: number }>();
  /** Set once a limit is crossed: the model call that crossed it, and its tools not answered. */
  #over: { breach: BudgetBreach; messageId: string; pending: Set<string> } | undefined;
  #stopped = false;

  constructor(channelId: string, binding: string | null, price: UsagePrice) {
    this.channelId = channelId;
    this.binding = binding;
    this.#price = price;
  }

  get usd(): number {
    let sum = 0;
    for (const call of this.#calls.values()) sum += call.usd;
    return sum;
  }

  get tokens(): number {
    return this.inputTokens + this.outputTokens;
  }

  get inputTokens(): number {
    let sum = 0;
    for (const call of this.#calls.values()) sum += call.input;
    return sum;
  }

  get outputTokens(): number {
    let sum = 0;
    for (const call of this.#calls.values()) sum += call.output;
    return sum;
  }

  /** The limit this turn crossed, once it has. */
  get breach(): BudgetBreach | undefined {
    return this.#over?.breach;
  }

  /**
   * Takes one line of the agent's output; `check` says whether the spend now crosses a limit.
   * True once, when the turn is to be stopped now.
   */
  observe(line: unknown, check: () => BudgetBreach | null): boolean {
    if (this.#stopped || !isObject(line)) return false;
    if (line.type === "assistant") return this.#assistant(line.message, check);
    if (line.type === "user" && this.#over !== undefined) {
      const { pending } = this.#over;
      if (pending.size === 0) return false;
      for (const block of blocks(line.message)) {
        if (block.type === "tool_result") pending.delete(String(block.tool_use_id));
      }
      return pending.size === 0 ? this.#stop() : false;
    }
    return false;
  }

  #assistant(message: unknown, check: () => BudgetBreach | null): boolean {
    if (!isObject(message)) return false;
    const id = typeof message.id === "string" ? message.id : `call-${this.#calls.size}`;
    // A model call after the one that crossed the limit: stop it at once.
    if (this.#over !== undefined && id !== this.#over.messageId) return this.#stop();
    if (message.usage !== undefined) {
      const model = typeof message.model === "string" ? message.model : "";
      const tokens = usageTokens(message.usage);
      this.#calls.set(id, {
        usd: this.#price(model, pricedUsage(message.usage)),
        input: tokens.input,
        output: tokens.output,
      });
    }
    if (this.#over === undefined) {
      const breach = check();
      if (breach !== null) this.#over = { breach, messageId: id, pending: new Set() };
    }
    if (this.#over !== undefined) {
      for (const block of blocks(message)) {
        if (block.type === "tool_use") this.#over.pending.add(String(block.id));
      }
    }
    return false;
  }

  #stop(): boolean {
    this.#stopped = true;
    return true;
  }
}
