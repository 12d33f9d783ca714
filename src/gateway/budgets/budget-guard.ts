/**
 * Budgets enforced: whether a channel may start a turn (the limits in force for it, against what
 * the store says every turn of every worker spent in the period, plus the turns running here),
 * and, through each running turn's `TurnMeter`, whether it crossed a limit since. The store's
 * sums are read before each turn starts; in between, turns running here add what their model
 * calls report. The clock is injected (`now`) so that resets can be tested without waiting.
 */
import { randomUUID } from "node:crypto";
import type { GatewayBindings } from "../bindings/bindings.js";
import { DEFAULTS_BINDING } from "../bindings/resolved-binding.js";
import type { GatewayStore, SpendTotal } from "../store/store.js";
import { channelLimits, type SpendLimit, type SpendScope } from "./budget-limits.js";
import { periodBounds } from "./budget-periods.js";
import type { BudgetBreach } from "./budget-text.js";
import { SpendLedger, type SpendStore } from "./spend-ledger.js";
import { TurnMeter, type UsagePrice } from "./turn-meter.js";
import { usageTokens } from "./usage-tokens.js";

export interface BudgetGuardOptions {
  store: Pick<GatewayStore, "spendSince"> & SpendStore;
  bindings: GatewayBindings;
  /** Prices a model call (rudder's price table); without it, calls cost 0 until their result. */
  price?: UsagePrice;
  now?: () => Date;
  /** Where a spend entry that could not be stored is said. */
  logger?: (line: string) => void;
}

/** What one spender (a channel under a binding) spent: US dollars and tokens. */
interface Spent {
  channelId: string;
  binding: string | null;
  usd: number;
  tokens: number;
}

function inScope(scope: SpendScope, spent: Pick<Spent, "channelId" | "binding">): boolean {
  if (scope.kind === "gateway") return true;
  if (scope.kind === "binding") return (spent.binding ?? DEFAULTS_BINDING) === scope.binding;
  return spent.channelId === scope.channelId;
}

function fromTotal(total: SpendTotal): Spent {
  return {
    channelId: total.channelId,
    binding: total.binding,
    usd: total.costUsd,
    tokens: total.inputTokens + total.outputTokens,
  };
}

export class BudgetGuard {
  readonly #options: BudgetGuardOptions;
  readonly #now: () => Date;
  /** Stores spend as it happens: running turns' so far, wake-ups' and compactions'. */
  readonly ledger: SpendLedger;
  /** The store's sums, by the start (ISO) of the period they count from. */
  readonly #stored = new Map<string, Spent[]>();
  readonly #running = new Set<TurnMeter>();
  /** Turns ended here since the store was last read, which its sums may not hold yet. */
  #ended: Array<Spent & { at: number }> = [];

  constructor(options: BudgetGuardOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.ledger = new SpendLedger(options.store, options.logger);
  }

  get bindings(): GatewayBindings {
    return this.#options.bindings;
  }

  now(): Date {
    return this.#now();
  }

  /**
   * The limit a turn of `channelId` would start past (the one that lasts longest, when several
   * are), or null. Reads the store's sums for the limits' periods first.
   */
  async check(channelId: string): Promise<BudgetBreach | null> {
    const limits = channelLimits(this.#options.bindings, channelId);
    if (limits.length === 0) return null;
    await this.refresh(limits);
    return this.#worst(limits);
  }

  /** A meter for a turn of `channelId` starting now; `end` it once the turn is settled. */
  meter(channelId: string): TurnMeter {
    const binding = this.#options.bindings.bindingFor(channelId).name;
    const meter = new TurnMeter(channelId, binding, this.#options.price ?? (() => 0));
    this.#running.add(meter);
    return meter;
  }

  /** The turn's spend is in the store now (or never will be): the meter stops counting. */
  end(meter: TurnMeter): void {
    if (!this.#running.delete(meter)) return;
    const { channelId, binding, usd, tokens } = meter;
    if (usd > 0 || tokens > 0) {
      this.#ended.push({ channelId, binding, usd, tokens, at: Date.now() });
    }
  }

  /**
   * Spend no turn's record will hold: a wake-up's (`costUsd` the growth of its process's
   * running total) or a `/compact`'s. Counted at once, stored as an entry; resolves once stored.
   */
  record(
    channelId: string,
    kind: "wake" | "compact",
    spent: { costUsd: number; usage: unknown },
  ): Promise<void> {
    const binding = this.#options.bindings.bindingFor(channelId).name;
    const tokens = usageTokens(spent.usage);
    const usd = Math.max(0, spent.costUsd);
    if (usd === 0 && tokens.input + tokens.output === 0) return Promise.resolve();
    this.#ended.push({
      channelId,
      binding,
      usd,
      tokens: tokens.input + tokens.output,
      at: Date.now(),
    });
    return this.ledger.put({
      id: `${kind}:${randomUUID()}`,
      channelId,
      binding,
      kind,
      costUsd: usd,
      inputTokens: tokens.input,
      outputTokens: tokens.output,
    });
  }

  /** Whether the meter's turn crossed a limit, against the sums read last (no store read). */
  crossed(meter: TurnMeter): BudgetBreach | null {
    return this.#worst(channelLimits(this.#options.bindings, meter.channelId));
  }

  /** Reads the store's sums for the periods `limits` count. */
  async refresh(limits: SpendLimit[]): Promise<void> {
    const now = this.#now();
    const starts = new Set(
      limits.map((limit) => periodBounds(limit.period, limit.timeZone, now).start.toISOString()),
    );
    const readAt = Date.now();
    const read = await Promise.all(
      [...starts].map(async (start) => {
        const totals = await this.#options.store.spendSince(start);
        return [start, totals.map(fromTotal)] as const;
      }),
    );
    for (const [start, spent] of read) this.#stored.set(start, spent);
    this.#ended = this.#ended.filter((ended) => ended.at > readAt);
  }

  /** What `limit` counts as spent now: the store's sums, turns ended since, turns running. */
  spent(limit: SpendLimit): number {
    const start = periodBounds(limit.period, limit.timeZone, this.#now()).start.toISOString();
    const amount = (spent: Spent) => (limit.unit === "usd" ? spent.usd : spent.tokens);
    let sum = 0;
    for (const spent of this.#stored.get(start) ?? []) {
      if (inScope(limit.scope, spent)) sum += amount(spent);
    }
    for (const spent of [...this.#ended, ...this.#running]) {
      if (inScope(limit.scope, spent)) sum += amount(spent);
    }
    return sum;
  }

  /** The channels that spent since `since` (ISO, a period start read last) or run a turn here. */
  spenders(since: string): Array<{ channelId: string; binding: string | null }> {
    const found = new Map<string, string | null>();
    for (const spent of [...(this.#stored.get(since) ?? []), ...this.#ended, ...this.#running]) {
      found.set(spent.channelId, spent.binding);
    }
    return [...found].map(([channelId, binding]) => ({ channelId, binding }));
  }

  #worst(limits: SpendLimit[]): BudgetBreach | null {
    const now = this.#now();
    let worst: BudgetBreach | null = null;
    for (const limit of limits) {
      const spent = this.spent(limit);
      if (spent < limit.amount) continue;
      const resetsAt = periodBounds(limit.period, limit.timeZone, now).end;
      if (worst === null || resetsAt > worst.resetsAt) worst = { limit, spent, resetsAt };
    }
    return worst;
  }
}
