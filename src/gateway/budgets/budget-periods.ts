/**
 * Days and months in a budget's time zone: when the one holding `now` began and when it ends
 * (the reset, midnight there), worked out with `Intl` so that summer time moves with the zone.
 */

export type BudgetPeriod = "day" | "month";

/** The zone's wall clock at `instant`, as the UTC fields of a `Date`-like number. */
function wallClock(instant: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(new Date(instant));
  const field = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  return Date.UTC(
    field("year"),
    field("month") - 1,
    field("day"),
    field("hour"),
    field("minute"),
    field("second"),
  );
}

/** The instant the zone's clock shows midnight of `year`-`month`-`day` (month from 0). */
function zonedMidnight(year: number, month: number, day: number, timeZone: string): Date {
  const wall = Date.UTC(year, month, day);
  // The offset at a first guess, then at the instant it gives (right across a change of offset).
  const guess = wall - (wallClock(wall, timeZone) - wall);
  return new Date(wall - (wallClock(guess, timeZone) - guess));
}

/** When the day or month holding `now` began in `timeZone`, and when it ends (its reset). */
export function periodBounds(
  period: BudgetPeriod,
  timeZone: string,
  now: Date,
): { start: Date; end: Date } {
  const wall = new Date(wallClock(now.getTime(), timeZone));
  const year = wall.getUTCFullYear();
  const month = wall.getUTCMonth();
  const day = wall.getUTCDate();
  if (period === "day") {
    return {
      start: zonedMidnight(year, month, day, timeZone),
      end: zonedMidnight(year, month, day + 1, timeZone),
    };
  }
  return {
    start: zonedMidnight(year, month, 1, timeZone),
    end: zonedMidnight(year, month + 1, 1, timeZone),
  };
}
