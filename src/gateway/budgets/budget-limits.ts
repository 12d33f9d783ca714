/**
 * The limits in force for a channel, from the configuration's budgets: the gateway's (the top
 * level `budget`), its `channel` limits, the channel's binding's, and that binding's `channel`
 * limits; each one a period, a unit, an amount and the spend it counts (a scope).
 */
import type { GatewayBindings } from "../bindings/bindings.js";
import { type Budget, budgetTimeZone, type ChannelBudget } from "../bindings/budget-schema.js";
import type { BudgetPeriod } from "./budget-periods.js";

/** Whose spend a limit counts: everything, one binding's channels, or one channel. */
export type SpendScope =
  | { kind: "gateway" }
  | { kind: "binding"; binding: string }
  | { kind: "channel"; channelId: string };

export interface SpendLimit {
  /** Where it is written: the gateway's budget or a binding's, for the level or per channel. */
  level: "gateway" | "binding";
  /** The binding's name for a binding's limit. */
  binding?: string;
  perChannel: boolean;
  scope: SpendScope;
  period: BudgetPeriod;
  unit: "usd" | "tokens";
  amount: number;
  timeZone: string;
}

const KEYS = [
  ["dailyUsd", "day", "usd"],
  ["monthlyUsd", "month", "usd"],
  ["dailyTokens", "day", "tokens"],
  ["monthlyTokens", "month", "tokens"],
] as const;

/** One level's limits (its own, or its `channel` ones) as `SpendLimit`s. */
function limitsOf(
  limits: ChannelBudget | undefined,
  base: Pick<SpendLimit, "level" | "binding" | "perChannel" | "scope" | "timeZone">,
): SpendLimit[] {
  if (limits === undefined) return [];
  return KEYS.flatMap(([key, period, unit]) => {
    const amount = limits[key];
    return amount === undefined ? [] : [{ ...base, period, unit, amount }];
  });
}

/** A level's limits on its own spend and on each channel's (`channelId`), in that order. */
export function budgetLimits(
  budget: Budget | undefined,
  level: { level: "gateway" } | { level: "binding"; binding: string },
  channelId: string | undefined,
): SpendLimit[] {
  if (budget === undefined) return [];
  const timeZone = budgetTimeZone(budget);
  const named = level.level === "binding" ? { binding: level.binding } : {};
  const scope: SpendScope =
    level.level === "gateway" ? { kind: "gateway" } : { kind: "binding", binding: level.binding };
  return [
    ...limitsOf(budget, { level: level.level, ...named, perChannel: false, scope, timeZone }),
    ...(channelId === undefined
      ? []
      : limitsOf(budget.channel, {
          level: level.level,
          ...named,
          perChannel: true,
          scope: { kind: "channel", channelId },
          timeZone,
        })),
  ];
}

/** Every limit a turn of `channelId` counts against now. */
export function channelLimits(bindings: GatewayBindings, channelId: string): SpendLimit[] {
  const binding = bindings.bindingFor(channelId);
  return [
    ...budgetLimits(bindings.budget, { level: "gateway" }, channelId),
    ...budgetLimits(binding.budget, { level: "binding", binding: binding.name }, channelId),
  ];
}
