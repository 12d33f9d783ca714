/**
 * The `budget` object of the gateway's configuration file, at the top level and in a binding
 * (and `defaults`): limits in US dollars and tokens per day and per month, the time zone their
 * days and months are counted in, and `channel`, the same limits for each channel under that
 * level. Every key is optional; an absent one is no limit. Budgets (issue 27) import it.
 */
import * as v from "valibot";
import { jsonObject } from "./json-object.js";

/** Whether `zone` is an IANA time zone this Node knows (`UTC`, `Europe/Paris`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const usd = v.pipe(
  v.number("must be a number of US dollars"),
  v.minValue(0, "must be at least 0"),
  v.finite("must be a finite number"),
);
const tokens = v.pipe(
  v.number("must be a whole number of tokens"),
  v.integer("must be a whole number of tokens"),
  v.minValue(0, "must be at least 0"),
);

const limitEntries = {
  dailyUsd: v.optional(usd),
  monthlyUsd: v.optional(usd),
  dailyTokens: v.optional(tokens),
  monthlyTokens: v.optional(tokens),
};

/** The limits of each channel under a level: the level's keys but `channel` and `timeZone`. */
export const ChannelBudgetSchema = jsonObject(v.strictObject(limitEntries, "must be an object"));

export const BudgetSchema = jsonObject(
  v.strictObject(
    {
      ...limitEntries,
      timeZone: v.optional(
        v.pipe(
          v.string("must be an IANA time zone name"),
          v.check(isTimeZone, "must be an IANA time zone name (such as UTC or Europe/Paris)"),
        ),
      ),
      channel: v.optional(ChannelBudgetSchema),
    },
    "must be an object",
  ),
);

/** Limits per channel under a level. */
export type ChannelBudget = v.InferOutput<typeof ChannelBudgetSchema>;

/** A level's limits as written (`timeZone` absent means "UTC"). */
export type Budget = v.InferOutput<typeof BudgetSchema>;

/** The time zone a budget counts its days and months in. */
export function budgetTimeZone(budget: Budget | undefined): string {
  return budget?.timeZone ?? "UTC";
}
