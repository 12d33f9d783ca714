/**
 * Spend against each limit, today and this month: for the gateway, each binding and each
 * channel a limit applies to (`GET /api/spend`, the page's panel), and one channel's (`/status`).
 */
import { type Budget, budgetTimeZone } from "../bindings/budget-schema.js";
import type { BudgetGuard } from "./budget-guard.js";
import { budgetLimits, channelLimits, type SpendLimit, type SpendScope } from "./budget-limits.js";
import { type BudgetPeriod, periodBounds } from "./budget-periods.js";
import { formatAmount, limitName } from "./budget-text.js";

export interface LimitReport {
  period: BudgetPeriod;
  unit: SpendLimit["unit"];
  /** Whose limit: `gateway` or the binding's name; `perChannel` for its `channel` limits. */
  level: string;
  perChannel: boolean;
  amount: number;
  spent: number;
  resetsAt: string;
  timeZone: string;
}

/** What a spender spent today and this month (in `timeZone`). */
export interface SpendFigures {
  timeZone: string;
  today: { usd: number; tokens: number };
  thisMonth: { usd: number; tokens: number };
  limits: LimitReport[];
}

export interface SpendReport {
  at: string;
  gateway: SpendFigures;
  bindings: Array<SpendFigures & { name: string }>;
  channels: Array<SpendFigures & { channelId: string; binding: string }>;
}

function spentIn(guard: BudgetGuard, scope: SpendScope, period: BudgetPeriod, timeZone: string) {
  const base = { level: "gateway", perChannel: false, scope, period, amount: 0, timeZone } as const;
  return {
    usd: guard.spent({ ...base, unit: "usd" }),
    tokens: guard.spent({ ...base, unit: "tokens" }),
  };
}

function limitReport(guard: BudgetGuard, limit: SpendLimit): LimitReport {
  return {
    period: limit.period,
    unit: limit.unit,
    level: limit.level === "gateway" ? "gateway" : (limit.binding ?? ""),
    perChannel: limit.perChannel,
    amount: limit.amount,
    spent: guard.spent(limit),
    resetsAt: periodBounds(limit.period, limit.timeZone, guard.now()).end.toISOString(),
    timeZone: limit.timeZone,
  };
}

function figures(
  guard: BudgetGuard,
  scope: SpendScope,
  timeZone: string,
  limits: SpendLimit[],
): SpendFigures {
  return {
    timeZone,
    today: spentIn(guard, scope, "day", timeZone),
    thisMonth: spentIn(guard, scope, "month", timeZone),
    limits: limits.map((limit) => limitReport(guard, limit)),
  };
}

/** Every period any budget counts (and UTC's), as limits of nothing, for `refresh`. */
function allPeriods(budgets: Array<Budget | undefined>): SpendLimit[] {
  const zones = new Set(["UTC", ...budgets.map(budgetTimeZone)]);
  return [...zones].flatMap((timeZone) =>
    (["day", "month"] as const).map((period) => ({
      level: "gateway" as const,
      perChannel: false,
      scope: { kind: "gateway" as const },
      period,
      unit: "usd" as const,
      amount: 0,
      timeZone,
    })),
  );
}

export async function spendReport(guard: BudgetGuard): Promise<SpendReport> {
  const { bindings } = guard;
  const list = bindings.list();
  await guard.refresh(allPeriods([bindings.budget, ...list.map((binding) => binding.budget)]));
  const gatewayZone = budgetTimeZone(bindings.budget);
  const monthStart = periodBounds("month", "UTC", guard.now()).start.toISOString();
  const channels = guard
    .spenders(monthStart)
    .map(({ channelId }) => ({ channelId, limits: channelLimits(bindings, channelId) }))
    .filter(({ limits }) => limits.some((limit) => limit.perChannel));
  return {
    at: guard.now().toISOString(),
    gateway: figures(
      guard,
      { kind: "gateway" },
      gatewayZone,
      budgetLimits(bindings.budget, { level: "gateway" }, undefined),
    ),
    bindings: list.map((binding) => ({
      name: binding.name,
      ...figures(
        guard,
        { kind: "binding", binding: binding.name },
        budgetTimeZone(binding.budget),
        budgetLimits(binding.budget, { level: "binding", binding: binding.name }, undefined),
      ),
    })),
    channels: channels.map(({ channelId, limits }) => ({
      channelId,
      binding: bindings.bindingFor(channelId).name,
      ...figures(
        guard,
        { kind: "channel", channelId },
        gatewayZone,
        limits.filter((limit) => limit.perChannel),
      ),
    })),
  };
}

/**
 * One channel's spend as `/status` says it: today and this month (in the gateway budget's time
 * zone), then each limit in force for it with what it counts, e.g.
 * `today $0.0123, 4,100 tokens; this month $1.20, 310,000 tokens` and
 * `the daily limit of binding "billing": $0.40 of $5.00, resets 2026-12-06 00:00 UTC`.
 */
export async function channelSpendLines(guard: BudgetGuard, channelId: string): Promise<string[]> {
  const { bindings } = guard;
  const limits = channelLimits(bindings, channelId);
  const zone = budgetTimeZone(bindings.budget);
  await guard.refresh([...allPeriods([bindings.budget]), ...limits]);
  const scope = { kind: "channel", channelId } as const;
  const today = spentIn(guard, scope, "day", zone);
  const month = spentIn(guard, scope, "month", zone);
  const both = (spent: { usd: number; tokens: number }) =>
    `${formatAmount("usd", spent.usd)}, ${formatAmount("tokens", spent.tokens)}`;
  return [
    `today ${both(today)}; this month ${both(month)}`,
    ...limits.map((limit) => {
      const report = limitReport(guard, limit);
      const reset = report.resetsAt.replace("T", " ").slice(0, 16);
      return (
        `${limitName(limit)}: ${formatAmount(limit.unit, report.spent)} of ` +
        `${formatAmount(limit.unit, limit.amount)}, resets ${reset} UTC`
      );
    }),
  ];
}

/** One channel's spend for `/status`: the lines `channelSpendLines` writes, and its figures. */
export async function channelSpend(
  guard: BudgetGuard,
  channelId: string,
): Promise<{ text: string; lines: string[] }> {
  const lines = await channelSpendLines(guard, channelId);
  return { text: lines.join("; "), lines };
}
