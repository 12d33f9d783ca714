/** What a channel is told when a budget stops a turn or holds a message, and how amounts read. */
import type { SpendLimit } from "./budget-limits.js";

/** What one limit has against it now, and when it starts again from 0. */
export interface BudgetBreach {
  limit: SpendLimit;
  spent: number;
  resetsAt: Date;
}

export function formatAmount(unit: SpendLimit["unit"], amount: number): string {
  if (unit === "tokens") return `${Math.round(amount).toLocaleString("en-US")} tokens`;
  return `$${amount < 1 ? amount.toFixed(4) : amount.toFixed(2)}`;
}

/** "the daily limit of binding "billing" per channel", and the like. */
export function limitName(limit: SpendLimit): string {
  const period = limit.period === "day" ? "daily" : "monthly";
  const owner = limit.level === "gateway" ? "the gateway" : `binding "${limit.binding}"`;
  return limit.perChannel
    ? `the ${period} limit per channel of ${owner}`
    : `the ${period} limit of ${owner}`;
}

/** The reset as the budget's zone shows it, and as UTC. */
export function resetText(limit: SpendLimit, resetsAt: Date): string {
  const local = new Intl.DateTimeFormat("sv-SE", {
    timeZone: limit.timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  }).format(resetsAt);
  return limit.timeZone === "UTC"
    ? `${local} UTC`
    : `${local} ${limit.timeZone} (${resetsAt.toISOString()})`;
}

function reached(breach: BudgetBreach): string {
  const { limit, spent } = breach;
  const when = limit.period === "day" ? "today" : "this month";
  return (
    `Budget reached: ${limitName(limit)} is ${formatAmount(limit.unit, limit.amount)}, ` +
    `and ${formatAmount(limit.unit, spent)} was spent ${when}.`
  );
}

/** The answer to a message that would start a turn past a limit. */
export function heldText(breach: BudgetBreach): string {
  return (
    `${reached(breach)} Nothing was sent to the agent: your message is kept and goes on when ` +
    `the limit resets at ${resetText(breach.limit, breach.resetsAt)}, or when the owner raises it.`
  );
}

/** The end of a turn stopped at its next model call. */
export function stoppedText(breach: BudgetBreach): string {
  return (
    `${reached(breach)} The agent was stopped before its next model call; what it did so far ` +
    `is kept. The limit resets at ${resetText(breach.limit, breach.resetsAt)}.`
  );
}

/** Why a schedule paused itself instead of firing. */
export function scheduleHeldText(breach: BudgetBreach): string {
  return (
    `${reached(breach)} The limit resets at ${resetText(breach.limit, breach.resetsAt)}; ` +
    "resume the schedule then, or once the owner raised the limit."
  );
}

/** Why an agent did not wake itself for its background tasks (said in its channel). */
export function wakeHeldText(breach: BudgetBreach): string {
  return (
    `The agent's wake-up (a background task finished) paused by a budget: ${reached(breach)} ` +
    `The limit resets at ${resetText(breach.limit, breach.resetsAt)}; the task's result ` +
    "reaches the agent with the channel's next message."
  );
}
